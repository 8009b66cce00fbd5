//! ROS 2's environment variables.

use simrob_ros2::env::{Discovery, EnvError, Range, DEFAULT_MAX_PARTICIPANTS};

fn with(vars: &[(&str, &str)]) -> Result<Discovery, EnvError> {
    Discovery::from_vars(|k| {
        vars.iter()
            .find(|(n, _)| *n == k)
            .map(|(_, v)| v.to_string())
    })
}

#[test]
fn defaults_are_domain_0_on_the_subnet() {
    assert_eq!(
        with(&[]).unwrap(),
        Discovery {
            domain_id: 0,
            range: Range::Subnet,
            max_participants: DEFAULT_MAX_PARTICIPANTS,
            max_sample: simrob_ros2::env::DEFAULT_MAX_SAMPLE,
        }
    );
    assert_eq!(with(&[("ROS_DOMAIN_ID", "")]).unwrap().domain_id, 0);
}

#[test]
fn domain_and_localhost() {
    let d = with(&[
        ("ROS_DOMAIN_ID", "42"),
        ("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST"),
    ])
    .unwrap();
    assert_eq!(d.domain_id, 42);
    assert_eq!(d.range, Range::Localhost);
    assert_eq!(
        with(&[("ROS_LOCALHOST_ONLY", "1")]).unwrap().range,
        Range::Localhost
    );
    // The newer variable wins.
    assert_eq!(
        with(&[
            ("ROS_LOCALHOST_ONLY", "1"),
            ("ROS_AUTOMATIC_DISCOVERY_RANGE", "SUBNET")
        ])
        .unwrap()
        .range,
        Range::Subnet
    );
}

#[test]
fn bad_values_are_refused() {
    assert!(matches!(
        with(&[("ROS_DOMAIN_ID", "233")]),
        Err(EnvError::DomainId(_))
    ));
    assert!(matches!(
        with(&[("ROS_DOMAIN_ID", "x")]),
        Err(EnvError::DomainId(_))
    ));
    assert!(matches!(
        with(&[("ROS_AUTOMATIC_DISCOVERY_RANGE", "OFF")]),
        Err(EnvError::Range(_))
    ));
}
