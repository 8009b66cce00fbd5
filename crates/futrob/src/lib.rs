//! The FutRob robot-soccer team: behaviour rules, world model, actions and team messages, as a sans-IO brain.
