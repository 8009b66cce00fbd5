//! [`CommandKeys`]: the configurable command names (seed 000 §6, SPEC S3).
//!
//! Every command is recognised by the string in its `Command` attribute. The strings are
//! configurable; the defaults are the seed's names. The configuration keys are those of
//! seed 000 §6, spelled as there (including its `commandsetimestepkey` and
//! `commandsynthesizekey`); the four commands for which the seed lists no key get keys
//! invented in the same style (marked *simrob*).
//!
//! | configuration key | command (default) | section |
//! |---|---|---|
//! | `commandregisteragentkey` (*simrob*) | `Register_Agent` | §2.1 |
//! | `commandinforequestkey` (*simrob*) | `Info_Request` | §2.2 |
//! | `commandregistermaterialsinteractionskey` | `Register_Materials_Interactions` | §2.3 |
//! | `commandcreateentitykey` | `Create_Entity` | §2.4 |
//! | `commandinitializesimulationkey` | `Initialize_Simulation` | §2.5 |
//! | `commandsetstepmodekey` | `Set_Step_Mode` | §2.6 |
//! | `commandsetstepflagkey` | `Make_Step` | §2.7 |
//! | `commandsetautoadjustmodekey` (*simrob*) | `Set_AutoAdjust_Mode` | §2.8 |
//! | `commandsetsyncmodekey` (*simrob*) | `Set_Sync_Mode` | §2.9 |
//! | `commandsynthesizekey` | `Synchronize` | §2.10 |
//! | `commandsetsyncwaitkey` | `Set_Sync_Wait` | §2.11 |
//! | `commandsetimestepkey` | `Set_Timestep` | §2.12 |
//! | `commandsetworldgravitykey` | `Set_World_Gravity` | §2.13 |
//! | `commandworldhardnesskey` | `Set_World_Hardness` | §2.14 |
//! | `commandworldbouncinesskey` | `Set_World_Bounciness` | §2.15 |
//! | `commandsavetofilekey` | `Save` | §2.16 |
//! | `commandloadfromfilekey` | `Load` | §2.17 |
//! | `commandsetfastmodekey` | `Set_Fast_Mode` | §2.18 |
//! | `commandsetstepsperiterationkey` | `Set_Steps_Per_Iteration` | §2.19 |
//! | `commandsetentitypositionkey` | `Set_Entity_Position` | §3.1 |
//! | `commandrobotcontrolkey` | `Robot_Motor_Control` | §3.2 |
//!
//! [`CommandKeys::set`] also accepts two corrected spellings as aliases:
//! `commandsettimestepkey` (= `commandsetimestepkey`) and `commandsynchronizekey`
//! (= `commandsynthesizekey`).
//!
//! Command names are compared exactly (case-sensitive) with the `Command` attribute after
//! trimming whitespace around it.

/// The `Command` attribute value of every command. `Default` gives the seed's names.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CommandKeys {
    /// `Register_Agent` (Agent_Message, §2.1).
    pub register_agent: String,
    /// `Info_Request` (Agent_Message, §2.2).
    pub info_request: String,
    /// `Synchronize` (Agent_Message, §2.10).
    pub synchronize: String,
    /// `Register_Materials_Interactions` (Control_Request, §2.3).
    pub register_materials_interactions: String,
    /// `Create_Entity` (Control_Request, §2.4).
    pub create_entity: String,
    /// `Initialize_Simulation` (Control_Request, §2.5).
    pub initialize_simulation: String,
    /// `Set_Step_Mode` (Control_Request, §2.6).
    pub set_step_mode: String,
    /// `Make_Step` (Control_Request, §2.7).
    pub make_step: String,
    /// `Set_AutoAdjust_Mode` (Control_Request, §2.8).
    pub set_auto_adjust_mode: String,
    /// `Set_Sync_Mode` (Control_Request, §2.9).
    pub set_sync_mode: String,
    /// `Set_Sync_Wait` (Control_Request, §2.11).
    pub set_sync_wait: String,
    /// `Set_Timestep` (Control_Request, §2.12).
    pub set_timestep: String,
    /// `Set_World_Gravity` (Control_Request, §2.13).
    pub set_world_gravity: String,
    /// `Set_World_Hardness` (Control_Request, §2.14).
    pub set_world_hardness: String,
    /// `Set_World_Bounciness` (Control_Request, §2.15).
    pub set_world_bounciness: String,
    /// `Save` (Control_Request, §2.16).
    pub save: String,
    /// `Load` (Control_Request, §2.17).
    pub load: String,
    /// `Set_Fast_Mode` (Control_Request, §2.18).
    pub set_fast_mode: String,
    /// `Set_Steps_Per_Iteration` (Control_Request, §2.19).
    pub set_steps_per_iteration: String,
    /// `Set_Entity_Position` (Entity_Request, §3.1).
    pub set_entity_position: String,
    /// `Robot_Motor_Control` (Entity_Request, §3.2).
    pub robot_motor_control: String,
}

/// (configuration key, default command name), in the order of the table above.
const CONFIG_KEYS: [(&str, &str); 21] = [
    ("commandregisteragentkey", "Register_Agent"),
    ("commandinforequestkey", "Info_Request"),
    (
        "commandregistermaterialsinteractionskey",
        "Register_Materials_Interactions",
    ),
    ("commandcreateentitykey", "Create_Entity"),
    ("commandinitializesimulationkey", "Initialize_Simulation"),
    ("commandsetstepmodekey", "Set_Step_Mode"),
    ("commandsetstepflagkey", "Make_Step"),
    ("commandsetautoadjustmodekey", "Set_AutoAdjust_Mode"),
    ("commandsetsyncmodekey", "Set_Sync_Mode"),
    ("commandsynthesizekey", "Synchronize"),
    ("commandsetsyncwaitkey", "Set_Sync_Wait"),
    ("commandsetimestepkey", "Set_Timestep"),
    ("commandsetworldgravitykey", "Set_World_Gravity"),
    ("commandworldhardnesskey", "Set_World_Hardness"),
    ("commandworldbouncinesskey", "Set_World_Bounciness"),
    ("commandsavetofilekey", "Save"),
    ("commandloadfromfilekey", "Load"),
    ("commandsetfastmodekey", "Set_Fast_Mode"),
    ("commandsetstepsperiterationkey", "Set_Steps_Per_Iteration"),
    ("commandsetentitypositionkey", "Set_Entity_Position"),
    ("commandrobotcontrolkey", "Robot_Motor_Control"),
];

/// Every configuration key with its default command name (see the module table), for
/// configuration loaders that list or validate keys.
pub fn config_keys() -> &'static [(&'static str, &'static str)] {
    &CONFIG_KEYS
}

/// Lower-cases a configuration key and maps the aliases to the seed's spelling.
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
        let mut keys = CommandKeys {
            register_agent: String::new(),
            info_request: String::new(),
            synchronize: String::new(),
            register_materials_interactions: String::new(),
            create_entity: String::new(),
            initialize_simulation: String::new(),
            set_step_mode: String::new(),
            make_step: String::new(),
            set_auto_adjust_mode: String::new(),
            set_sync_mode: String::new(),
            set_sync_wait: String::new(),
            set_timestep: String::new(),
            set_world_gravity: String::new(),
            set_world_hardness: String::new(),
            set_world_bounciness: String::new(),
            save: String::new(),
            load: String::new(),
            set_fast_mode: String::new(),
            set_steps_per_iteration: String::new(),
            set_entity_position: String::new(),
            robot_motor_control: String::new(),
        };
        for (key, default) in CONFIG_KEYS {
            keys.set(key, default);
        }
        keys
    }
}

impl CommandKeys {
    fn slot(&mut self, config_key: &str) -> Option<&mut String> {
        let slot = match config_key {
            "commandregisteragentkey" => &mut self.register_agent,
            "commandinforequestkey" => &mut self.info_request,
            "commandregistermaterialsinteractionskey" => &mut self.register_materials_interactions,
            "commandcreateentitykey" => &mut self.create_entity,
            "commandinitializesimulationkey" => &mut self.initialize_simulation,
            "commandsetstepmodekey" => &mut self.set_step_mode,
            "commandsetstepflagkey" => &mut self.make_step,
            "commandsetautoadjustmodekey" => &mut self.set_auto_adjust_mode,
            "commandsetsyncmodekey" => &mut self.set_sync_mode,
            "commandsynthesizekey" => &mut self.synchronize,
            "commandsetsyncwaitkey" => &mut self.set_sync_wait,
            "commandsetimestepkey" => &mut self.set_timestep,
            "commandsetworldgravitykey" => &mut self.set_world_gravity,
            "commandworldhardnesskey" => &mut self.set_world_hardness,
            "commandworldbouncinesskey" => &mut self.set_world_bounciness,
            "commandsavetofilekey" => &mut self.save,
            "commandloadfromfilekey" => &mut self.load,
            "commandsetfastmodekey" => &mut self.set_fast_mode,
            "commandsetstepsperiterationkey" => &mut self.set_steps_per_iteration,
            "commandsetentitypositionkey" => &mut self.set_entity_position,
            "commandrobotcontrolkey" => &mut self.robot_motor_control,
            _ => return None,
        };
        Some(slot)
    }

    /// Sets the command name for `config_key` (a key of the module table, matched
    /// case-insensitively; surrounding whitespace of `value` is trimmed). Returns `false`
    /// (and changes nothing) when `config_key` is not a command key. Call
    /// [`CommandKeys::validate`] after setting keys.
    pub fn set(&mut self, config_key: &str, value: &str) -> bool {
        match self.slot(&canonical(config_key)) {
            Some(slot) => {
                *slot = value.trim().to_string();
                true
            }
            None => false,
        }
    }

    /// The command name configured for `config_key`, if it is a command key.
    pub fn get(&self, config_key: &str) -> Option<&str> {
        let key = canonical(config_key);
        self.all()
            .into_iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v)
    }

    /// (configuration key, current command name) for every command.
    pub fn all(&self) -> [(&'static str, &str); 21] {
        [
            (CONFIG_KEYS[0].0, &self.register_agent),
            (CONFIG_KEYS[1].0, &self.info_request),
            (CONFIG_KEYS[2].0, &self.register_materials_interactions),
            (CONFIG_KEYS[3].0, &self.create_entity),
            (CONFIG_KEYS[4].0, &self.initialize_simulation),
            (CONFIG_KEYS[5].0, &self.set_step_mode),
            (CONFIG_KEYS[6].0, &self.make_step),
            (CONFIG_KEYS[7].0, &self.set_auto_adjust_mode),
            (CONFIG_KEYS[8].0, &self.set_sync_mode),
            (CONFIG_KEYS[9].0, &self.synchronize),
            (CONFIG_KEYS[10].0, &self.set_sync_wait),
            (CONFIG_KEYS[11].0, &self.set_timestep),
            (CONFIG_KEYS[12].0, &self.set_world_gravity),
            (CONFIG_KEYS[13].0, &self.set_world_hardness),
            (CONFIG_KEYS[14].0, &self.set_world_bounciness),
            (CONFIG_KEYS[15].0, &self.save),
            (CONFIG_KEYS[16].0, &self.load),
            (CONFIG_KEYS[17].0, &self.set_fast_mode),
            (CONFIG_KEYS[18].0, &self.set_steps_per_iteration),
            (CONFIG_KEYS[19].0, &self.set_entity_position),
            (CONFIG_KEYS[20].0, &self.robot_motor_control),
        ]
    }

    /// Checks that every command has a non-empty name without surrounding whitespace and
    /// that no two commands share a name (even across `Agent_Message`, `Control_Request`
    /// and `Entity_Request`, so that every name means one thing). The error names the
    /// offending configuration keys.
    pub fn validate(&self) -> Result<(), String> {
        let all = self.all();
        for (i, (key, name)) in all.iter().enumerate() {
            if name.is_empty() {
                return Err(format!("command key {key} is empty"));
            }
            if name.trim() != *name {
                return Err(format!(
                    "command key {key} = {name:?} has whitespace around it"
                ));
            }
            if let Some((other, _)) = all[..i].iter().find(|(_, n)| n == name) {
                return Err(format!(
                    "command keys {other} and {key} both name the command {name:?}; every command needs its own name"
                ));
            }
        }
        Ok(())
    }

    /// Names of the `Agent_Message` commands.
    pub fn agent_commands(&self) -> [&str; 3] {
        [&self.register_agent, &self.info_request, &self.synchronize]
    }

    /// Names of the `Control_Request` commands.
    pub fn control_commands(&self) -> [&str; 16] {
        [
            &self.register_materials_interactions,
            &self.create_entity,
            &self.initialize_simulation,
            &self.set_step_mode,
            &self.make_step,
            &self.set_auto_adjust_mode,
            &self.set_sync_mode,
            &self.set_sync_wait,
            &self.set_timestep,
            &self.set_world_gravity,
            &self.set_world_hardness,
            &self.set_world_bounciness,
            &self.save,
            &self.load,
            &self.set_fast_mode,
            &self.set_steps_per_iteration,
        ]
    }

    /// Names of the `Entity_Request` commands.
    pub fn entity_commands(&self) -> [&str; 2] {
        [&self.set_entity_position, &self.robot_motor_control]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_seed_names() {
        let k = CommandKeys::default();
        assert_eq!(k.create_entity, "Create_Entity");
        assert_eq!(k.make_step, "Make_Step");
        assert_eq!(k.synchronize, "Synchronize");
        assert_eq!(k.set_auto_adjust_mode, "Set_AutoAdjust_Mode");
        assert!(k.validate().is_ok());
        for (key, default) in config_keys() {
            assert_eq!(k.get(key), Some(*default), "{key}");
        }
        assert_eq!(config_keys().len(), 21);
    }

    #[test]
    fn set_and_aliases() {
        let mut k = CommandKeys::default();
        assert!(k.set("commandsetimestepkey", " Step_Size "));
        assert_eq!(k.set_timestep, "Step_Size");
        assert!(k.set("CommandSetTimestepKey", "TS"));
        assert_eq!(k.set_timestep, "TS");
        assert!(k.set("commandsynchronizekey", "Sync"));
        assert_eq!(k.synchronize, "Sync");
        assert_eq!(k.get("commandsynthesizekey"), Some("Sync"));
        assert!(!k.set("communicationreceiverport", "1"));
        assert!(k.validate().is_ok());
    }

    #[test]
    fn validate_rejects_shared_and_empty_names() {
        let mut k = CommandKeys::default();
        k.set("commandsavetofilekey", "Load");
        let e = k.validate().unwrap_err();
        assert!(
            e.contains("commandsavetofilekey") && e.contains("commandloadfromfilekey"),
            "{e}"
        );
        let mut k = CommandKeys::default();
        k.set("commandrobotcontrolkey", "Register_Agent");
        assert!(k.validate().is_err());
        let mut k = CommandKeys::default();
        k.set("commandsetstepflagkey", "");
        assert!(k.validate().unwrap_err().contains("empty"));
    }
}
