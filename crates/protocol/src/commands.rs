//! The command table: every SimRob command, once.
//!
//! `command_table!` below is the single list of commands. Each row gives the command's
//! [`Command`] variant, its [`Family`] (which element carries it), its configuration key
//! (SimRob manual §6, spelled as there, including its `commandsetimestepkey` and
//! `commandsynthesizekey`; the commands for which the SimRob manual lists no key get keys
//! invented in the same style, marked *simrob*), its default name (the SimRob manual's), where
//! it is defined and what it does (the protocol reference, `docs/reference/protocol.md`, is
//! generated from the table).
//! [`CommandKeys`](crate::CommandKeys), [`config_keys`](crate::config_keys), the decoder's
//! dispatch and the encoder's `Command` attribute are all derived from it.
//!
//! The table depends on nothing else in the crate: the typed requests
//! ([`Request`](crate::Request) and its families) live in [`crate::model`], how each
//! command's payload is read in the decoder (`decode_payload`) and written in the encoder
//! (`encode_payload`). **A new command** is a row in the table, a request variant, one arm in
//! `decode_payload` and one in `encode_payload` (the compiler points at every arm still
//! missing), and then its handling where requests are applied.
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
//! | `commandsetrollingresistancekey` (*simrob*) | `Set_Rolling_Resistance` | [humanoid soccer](crate::humanoid) |
//! | `commandhumanoidactionkey` (*simrob*) | `Humanoid_Action` | [humanoid soccer](crate::humanoid) |
//! | `commandunregisteragentkey` (*simrob*) | `Unregister_Agent` | not in the SimRob manual: an agent that stops says so |

/// The element a command travels in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// `<Message><Agent_Message Command=…>`.
    Agent,
    /// `<Message><Simulation_Message><Control_Request Command=…>`.
    Control,
    /// `<Message><Simulation_Message><Entity_Request Command=…>`.
    Entity,
}

impl Family {
    /// The element name (`Agent_Message`, `Control_Request`, `Entity_Request`).
    pub const fn element(self) -> &'static str {
        match self {
            Family::Agent => "Agent_Message",
            Family::Control => "Control_Request",
            Family::Entity => "Entity_Request",
        }
    }
}

macro_rules! command_table {
    ($( $variant:ident, $family:ident, $key:literal, $name:literal, $section:literal, $summary:literal; )*) => {
        /// Every SimRob command, in the order of the command table.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Command {
            $(
                #[doc = concat!("`", $name, "` (configuration key `", $key, "`).")]
                $variant,
            )*
        }

        impl Command {
            /// Every command, in table order.
            pub const ALL: &'static [Command] = &[$(Command::$variant),*];
            /// How many commands there are.
            pub const COUNT: usize = Command::ALL.len();

            /// The configuration key that renames this command.
            pub const fn config_key(self) -> &'static str {
                match self { $(Command::$variant => $key,)* }
            }

            /// The SimRob manual's name for this command (its default `Command` attribute).
            pub const fn default_name(self) -> &'static str {
                match self { $(Command::$variant => $name,)* }
            }

            /// Where it is defined: a section of the SimRob manual (`§2.4`), or the simrob
            /// extension it belongs to (`humanoid soccer`, see [`crate::humanoid`]; `agents that
            /// leave`).
            pub const fn section(self) -> &'static str {
                match self { $(Command::$variant => $section,)* }
            }

            /// What it does, in a sentence.
            pub const fn summary(self) -> &'static str {
                match self { $(Command::$variant => $summary,)* }
            }

            /// The element this command travels in.
            pub const fn family(self) -> Family {
                match self { $(Command::$variant => Family::$family,)* }
            }

            /// This command's position in [`Command::ALL`].
            pub const fn index(self) -> usize {
                self as usize
            }
        }

        /// (configuration key, default name) of every command, in table order.
        pub(crate) const CONFIG_KEYS: &[(&str, &str)] = &[$(($key, $name)),*];
    };
}

command_table! {
    RegisterAgent, Agent, "commandregisteragentkey", "Register_Agent", "§2.1", "adds an agent (its address, whether it is synchronous, how often it gets broadcasts) or updates the one with the same key; a key with a control character is refused";
    InfoRequest, Agent, "commandinforequestkey", "Info_Request", "§2.2", "asks for the address of another agent; answered to the requester only: to the address the agent named in `Requester` registered, whichever socket the request came from";
    RegisterMaterialsInteractions, Control, "commandregistermaterialsinteractionskey", "Register_Materials_Interactions", "§2.3", "registers materials and how pairs of them meet (hardness, bounciness, slip, friction)";
    CreateEntity, Control, "commandcreateentitykey", "Create_Entity", "§2.4", "adds a robot, a field, a ball or (simrob) a humanoid";
    InitializeSimulation, Control, "commandinitializesimulationkey", "Initialize_Simulation", "§2.5", "starts the physics (nothing moves before)";
    SetStepMode, Control, "commandsetstepmodekey", "Set_Step_Mode", "§2.6", "`true`: advance one iteration per `Make_Step` (pause); `false`: run";
    MakeStep, Control, "commandsetstepflagkey", "Make_Step", "§2.7", "grants one iteration in step mode, which the server runs at its pace";
    SetAutoAdjustMode, Control, "commandsetautoadjustmodekey", "Set_AutoAdjust_Mode", "§2.8", "`true`: adjust timestep and steps per iteration so that simulated time tracks the wall clock";
    SetSyncMode, Control, "commandsetsyncmodekey", "Set_Sync_Mode", "§2.9", "`true`: after each broadcast, wait for every synchronous agent's `Synchronize`";
    Synchronize, Agent, "commandsynthesizekey", "Synchronize", "§2.10", "a synchronous agent has finished an iteration";
    SetSyncWait, Control, "commandsetsyncwaitkey", "Set_Sync_Wait", "§2.11", "the longest the server waits for synchronous agents, s";
    SetTimestep, Control, "commandsetimestepkey", "Set_Timestep", "§2.12", "the physics step, s";
    SetWorldGravity, Control, "commandsetworldgravitykey", "Set_World_Gravity", "§2.13", "gravity along Z, m/s²";
    SetWorldHardness, Control, "commandworldhardnesskey", "Set_World_Hardness", "§2.14", "the world's global softness (ODE CFM)";
    SetWorldBounciness, Control, "commandworldbouncinesskey", "Set_World_Bounciness", "§2.15", "the world's global error correction (ODE ERP)";
    Save, Control, "commandsavetofilekey", "Save", "§2.16", "writes the whole simulation to a file in the save directory";
    Load, Control, "commandloadfromfilekey", "Load", "§2.17", "replaces the simulation with one saved in a file";
    SetFastMode, Control, "commandsetfastmodekey", "Set_Fast_Mode", "§2.18", "`true`: a faster, less exact solver";
    SetStepsPerIteration, Control, "commandsetstepsperiterationkey", "Set_Steps_Per_Iteration", "§2.19", "physics steps per iteration (broadcasts go out once per iteration)";
    SetEntityPosition, Entity, "commandsetentitypositionkey", "Set_Entity_Position", "§3.1", "moves a robot or a ball rigidly";
    RobotMotorControl, Entity, "commandrobotcontrolkey", "Robot_Motor_Control", "§3.2", "sets target speeds of a robot's wheel motors, rad/s";
    SetRollingResistance, Control, "commandsetrollingresistancekey", "Set_Rolling_Resistance", "humanoid soccer", "rolling resistance of a ball of one material on another";
    HumanoidAction, Entity, "commandhumanoidactionkey", "Humanoid_Action", "humanoid soccer", "one of a humanoid's actions by FutRob's name and parameters (walk, turn, kick…)";
    UnregisterAgent, Agent, "commandunregisteragentkey", "Unregister_Agent", "agents that leave", "removes the agent registered with this key (it stops receiving broadcasts; lockstep no longer waits for it)";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_consistent() {
        for (i, c) in Command::ALL.iter().enumerate() {
            assert_eq!(c.index(), i);
            assert_eq!(CONFIG_KEYS[i], (c.config_key(), c.default_name()));
        }
        assert_eq!(Command::COUNT, 24);
        let count = |f| Command::ALL.iter().filter(|c| c.family() == f).count();
        assert_eq!(
            (
                count(Family::Agent),
                count(Family::Control),
                count(Family::Entity)
            ),
            (4, 17, 3)
        );
    }
}
