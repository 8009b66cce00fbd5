//! [`CommandKeys`]: the configurable command names (SimRob manual §6, SPEC S3).
//!
//! Every command is recognised by the string in its `Command` attribute. The strings are
//! configurable; the defaults are the SimRob manual's names. Which commands exist, their
//! configuration keys and default names are the command table
//! ([`crate::commands`]); this type holds one name per row.
//!
//! [`CommandKeys::set`] also accepts two corrected spellings as aliases:
//! `commandsettimestepkey` (= `commandsetimestepkey`) and `commandsynchronizekey`
//! (= `commandsynthesizekey`).
//!
//! Command names are compared exactly (case-sensitive) with the `Command` attribute after
//! trimming whitespace around it.

use std::ops::Index;

use crate::commands::{Command, Family, CONFIG_KEYS};

/// The `Command` attribute value of every command, indexed by [`Command`]. `Default` gives
/// the SimRob manual's names.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CommandKeys {
    names: [String; Command::COUNT],
}

/// Why a set of command names cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeysError {
    /// A command's name is the empty string.
    #[error("command key {key} is empty")]
    Empty {
        /// The configuration key that names the command.
        key: &'static str,
    },
    /// A command's name starts or ends with whitespace (the `Command` attribute is trimmed,
    /// so it could never match).
    #[error("command key {key} = {name:?} has whitespace around it")]
    Whitespace {
        /// The configuration key that names the command.
        key: &'static str,
        /// The name as given.
        name: String,
    },
    /// Two commands have the same name, so a request could not say which one it is.
    #[error(
        "command keys {first} and {second} both name the command {name:?}; every command needs its own name"
    )]
    Shared {
        /// The configuration key of the first command, in command table order.
        first: &'static str,
        /// The configuration key of the later command in table order.
        second: &'static str,
        /// The name both use.
        name: String,
    },
}

/// Every configuration key with its default command name (see the command table), for
/// configuration loaders that list or validate keys.
pub fn config_keys() -> &'static [(&'static str, &'static str)] {
    CONFIG_KEYS
}

/// Lower-cases a configuration key and maps the aliases to the SimRob manual's spelling.
fn canonical(config_key: &str) -> String {
    let key = config_key.trim().to_ascii_lowercase();
    match key.as_str() {
        "commandsynchronizekey" => "commandsynthesizekey".to_string(),
        "commandsettimestepkey" => "commandsetimestepkey".to_string(),
        _ => key,
    }
}

impl Default for CommandKeys {
    fn default() -> Self {
        CommandKeys {
            names: std::array::from_fn(|i| Command::ALL[i].default_name().to_string()),
        }
    }
}

impl Index<Command> for CommandKeys {
    type Output = str;
    fn index(&self, command: Command) -> &str {
        self.name(command)
    }
}

impl CommandKeys {
    /// The configured name of `command`.
    pub fn name(&self, command: Command) -> &str {
        &self.names[command.index()]
    }

    /// The command configured under `name` (the `Command` attribute, already trimmed), in
    /// any family.
    pub fn lookup(&self, name: &str) -> Option<Command> {
        Command::ALL
            .iter()
            .copied()
            .find(|c| self.names[c.index()] == name)
    }

    /// The command key `config_key` names (matched case-insensitively, aliases included).
    pub fn command_for_key(config_key: &str) -> Option<Command> {
        let key = canonical(config_key);
        Command::ALL.iter().copied().find(|c| c.config_key() == key)
    }

    /// Sets the name of one command.
    pub fn set_name(&mut self, command: Command, name: &str) {
        self.names[command.index()] = name.trim().to_string();
    }

    /// Sets the command name for `config_key` (a key of the command table, matched
    /// case-insensitively; surrounding whitespace of `value` is trimmed). Returns `false`
    /// (and changes nothing) when `config_key` is not a command key. Call
    /// [`CommandKeys::validate`] after setting keys.
    pub fn set(&mut self, config_key: &str, value: &str) -> bool {
        match Self::command_for_key(config_key) {
            Some(c) => {
                self.set_name(c, value);
                true
            }
            None => false,
        }
    }

    /// The command name configured for `config_key`, if it is a command key.
    pub fn get(&self, config_key: &str) -> Option<&str> {
        Self::command_for_key(config_key).map(|c| self.name(c))
    }

    /// (configuration key, current command name) for every command, in table order.
    pub fn all(&self) -> impl Iterator<Item = (&'static str, &str)> + '_ {
        Command::ALL.iter().map(|c| (c.config_key(), self.name(*c)))
    }

    /// Checks that every command has a non-empty name without surrounding whitespace and
    /// that no two commands share a name (even across `Agent_Message`, `Control_Request`
    /// and `Entity_Request`, so that every name means one thing). The error names the
    /// offending configuration keys.
    pub fn validate(&self) -> Result<(), KeysError> {
        for (i, c) in Command::ALL.iter().enumerate() {
            let (key, name) = (c.config_key(), self.name(*c));
            if name.is_empty() {
                return Err(KeysError::Empty { key });
            }
            if name.trim() != name {
                return Err(KeysError::Whitespace {
                    key,
                    name: name.to_string(),
                });
            }
            if let Some(other) = Command::ALL[..i].iter().find(|o| self.name(**o) == name) {
                return Err(KeysError::Shared {
                    first: other.config_key(),
                    second: key,
                    name: name.to_string(),
                });
            }
        }
        Ok(())
    }

    /// Names of the commands of one family, in table order.
    pub fn names_in(&self, family: Family) -> Vec<&str> {
        Command::ALL
            .iter()
            .filter(|c| c.family() == family)
            .map(|c| self.name(*c))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_seed_names() {
        let k = CommandKeys::default();
        assert_eq!(&k[Command::CreateEntity], "Create_Entity");
        assert_eq!(&k[Command::MakeStep], "Make_Step");
        assert_eq!(&k[Command::Synchronize], "Synchronize");
        assert_eq!(&k[Command::SetAutoAdjustMode], "Set_AutoAdjust_Mode");
        assert!(k.validate().is_ok());
        for (key, default) in config_keys() {
            assert_eq!(k.get(key), Some(*default), "{key}");
        }
        assert_eq!(config_keys().len(), 24);
        assert_eq!(k.lookup("Save"), Some(Command::Save));
        assert_eq!(k.lookup("save"), None);
    }

    #[test]
    fn set_and_aliases() {
        let mut k = CommandKeys::default();
        assert!(k.set("commandsetimestepkey", " Step_Size "));
        assert_eq!(&k[Command::SetTimestep], "Step_Size");
        assert!(k.set("CommandSetTimestepKey", "TS"));
        assert_eq!(&k[Command::SetTimestep], "TS");
        assert!(k.set("commandsynchronizekey", "Sync"));
        assert_eq!(&k[Command::Synchronize], "Sync");
        assert_eq!(k.get("commandsynthesizekey"), Some("Sync"));
        assert!(!k.set("communicationreceiverport", "1"));
        assert!(k.validate().is_ok());
    }

    #[test]
    fn validate_rejects_shared_and_empty_names() {
        let mut k = CommandKeys::default();
        k.set("commandsavetofilekey", "Load");
        let e = k.validate().unwrap_err().to_string();
        assert!(
            e.contains("commandsavetofilekey") && e.contains("commandloadfromfilekey"),
            "{e}"
        );
        let mut k = CommandKeys::default();
        k.set("commandrobotcontrolkey", "Register_Agent");
        assert!(k.validate().is_err());
        let mut k = CommandKeys::default();
        k.set("commandsetstepflagkey", "");
        assert!(k.validate().unwrap_err().to_string().contains("empty"));
    }
}
