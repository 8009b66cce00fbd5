//! Humanoid robot soccer on simrob: the KidSize field, the humanoid body and its timed actions, the head camera and its noise profiles.
