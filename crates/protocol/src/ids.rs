//! The identifiers a message names: an entity and a material.
//!
//! Both are non-negative integers on the wire (`<Entity_Id>`, `<Material>`, `Entity_id`
//! attributes) and print as that number; the types keep one from being passed where the other
//! (or a body or joint number) is expected.

use std::fmt;
use std::num::ParseIntError;
use std::str::FromStr;

macro_rules! wire_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default,
            serde::Serialize, serde::Deserialize,
        )]
        #[repr(transparent)]
        #[serde(transparent)]
        pub struct $name(pub u32);

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl FromStr for $name {
            type Err = ParseIntError;
            /// The decimal number, as the wire writes it.
            fn from_str(s: &str) -> Result<Self, ParseIntError> {
                s.parse().map($name)
            }
        }
    };
}

wire_id!(
    /// An entity's id: chosen by whoever creates it (`Create_Entity`'s `<Entity_Id>`), unique
    /// in a world.
    EntityId
);

wire_id!(
    /// A body material: an index into the world's material table (`<Material>`), whose pairs
    /// set friction and bounce.
    MaterialId
);
