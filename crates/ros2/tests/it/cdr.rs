//! The messages' CDR layout (little endian, as ROS 2 sends it), byte for byte where it
//! matters: what ROS 2 nodes send decodes, and what simrob sends has ROS 2's sizes.

use byteorder::LittleEndian;
use rustdds::cdr_encoding::{from_bytes, to_vec};
use simrob_ros2::msg::*;

fn cdr<T: serde::Serialize>(m: &T) -> Vec<u8> {
    to_vec::<T, LittleEndian>(m).expect("serializes")
}

#[test]
fn clock_is_two_words() {
    let b = cdr(&Clock {
        clock: Time {
            sec: 3,
            nanosec: 500_000_000,
        },
    });
    assert_eq!(b, [3, 0, 0, 0, 0x00, 0x65, 0xcd, 0x1d]);
}

#[test]
fn twist_is_six_doubles_and_decodes() {
    let mut b = Vec::new();
    for v in [0.5f64, 0.0, 0.0, 0.0, 0.0, -1.25] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    let (t, used): (Twist, usize) = from_bytes::<Twist, LittleEndian>(&b).expect("decodes");
    assert_eq!(used, 48);
    assert_eq!(t.linear.x, 0.5);
    assert_eq!(t.angular.z, -1.25);
    assert_eq!(cdr(&t), b);
}

#[test]
fn a_short_twist_is_refused() {
    let b = 5.0f64.to_le_bytes();
    assert!(from_bytes::<Twist, LittleEndian>(&b).is_err());
}

#[test]
fn header_strings_carry_length_and_nul_and_doubles_align_to_8() {
    let o = Odometry {
        header: Header {
            stamp: Time { sec: 1, nanosec: 2 },
            frame_id: "a".into(),
        },
        child_frame_id: "bc".into(),
        ..Default::default()
    };
    let b = cdr(&o);
    // stamp 8, "a": length 2 + 'a' '\0' (14), pad to 16, "bc": length 3 + "bc\0" (23),
    // pad to 24, then pose 7 doubles + 36, twist 6 + 36 doubles.
    assert_eq!(&b[8..14], &[2, 0, 0, 0, b'a', 0]);
    assert_eq!(&b[16..23], &[3, 0, 0, 0, b'b', b'c', 0]);
    assert_eq!(b.len(), 24 + (7 + 36 + 6 + 36) * 8);
    let (back, _) = from_bytes::<Odometry, LittleEndian>(&b).expect("decodes");
    assert_eq!(back, o);
}

#[test]
fn tf_message_is_a_sequence() {
    let m = TFMessage {
        transforms: vec![TransformStamped::default(), TransformStamped::default()],
    };
    let b = cdr(&m);
    assert_eq!(&b[..4], &[2, 0, 0, 0]);
    let (back, _) = from_bytes::<TFMessage, LittleEndian>(&b).expect("decodes");
    assert_eq!(back.transforms.len(), 2);
    assert_eq!(back.transforms[0].transform.rotation.w, 1.0);
}

#[test]
fn ros_type_names() {
    assert_eq!(Twist::TYPE_NAME, "geometry_msgs::msg::dds_::Twist_");
    assert_eq!(Odometry::TYPE_NAME, "nav_msgs::msg::dds_::Odometry_");
    assert_eq!(TFMessage::TYPE_NAME, "tf2_msgs::msg::dds_::TFMessage_");
    assert_eq!(Clock::TYPE_NAME, "rosgraph_msgs::msg::dds_::Clock_");
    assert_eq!(Range::TYPE_NAME, "sensor_msgs::msg::dds_::Range_");
    assert_eq!(LaserScan::TYPE_NAME, "sensor_msgs::msg::dds_::LaserScan_");
    assert_eq!(
        PoseStamped::TYPE_NAME,
        "geometry_msgs::msg::dds_::PoseStamped_"
    );
    assert_eq!(simrob_ros2::node::dds_topic("/clock"), "rt/clock");
    assert_eq!(
        simrob_ros2::node::dds_topic("robot_3/cmd_vel"),
        "rt/robot_3/cmd_vel"
    );
}

#[test]
fn times_and_quaternions() {
    assert_eq!(
        Time::from_secs(1.25),
        Time {
            sec: 1,
            nanosec: 250_000_000
        }
    );
    // Rounded to the nanosecond, a whole second carried.
    assert_eq!(
        Time::from_secs(9.999_999_999_9),
        Time {
            sec: 10,
            nanosec: 0
        }
    );
    assert_eq!(
        Time::from_secs(999.139_999_999_9),
        Time {
            sec: 999,
            nanosec: 140_000_000
        }
    );
    assert_eq!(Time::from_secs(-3.0), Time::default());
    assert_eq!(Time::from_secs(f64::NAN), Time::default());
    assert_eq!(Time::from_secs(1e12).sec, i32::MAX);
    let q = Quaternion::from_rpy(0.0, 0.0, 1.0);
    assert!((q.yaw() - 1.0).abs() < 1e-12);
    assert_eq!(q, Quaternion::from_yaw(1.0));
}

#[test]
fn a_match_score_and_event_on_the_wire() {
    let b = cdr(&simrob_ros2::soccer::score_message([2, 1]));
    // layout: one dimension ("cyan,magenta": length 13 + 12 bytes + NUL, size, stride),
    // data_offset; then the data: length 2, two int32.
    let mut want = vec![1, 0, 0, 0, 13, 0, 0, 0];
    want.extend_from_slice(b"cyan,magenta\0");
    want.extend_from_slice(&[0, 0, 0]); // pad to 4
    want.extend_from_slice(&[2, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0]);
    want.extend_from_slice(&[2, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0]);
    assert_eq!(b, want);
    assert_eq!(
        Int32MultiArray::TYPE_NAME,
        "std_msgs::msg::dds_::Int32MultiArray_"
    );
    let t = cdr(&Text {
        data: "0.00 kick-off cyan".into(),
    });
    assert_eq!(&t[..4], &[19, 0, 0, 0]);
    assert_eq!(&t[4..], b"0.00 kick-off cyan\0");
    assert_eq!(Text::TYPE_NAME, "std_msgs::msg::dds_::String_");
}

/// Inputs are decoded exactly: a sample with more after the message (another layout under
/// the same type name) is refused; the zero padding to a multiple of 4 is not.
#[test]
fn input_samples_with_bytes_left_over_are_refused() {
    use rustdds::no_key::Decode;
    use rustdds::RepresentationIdentifier as Rep;
    use simrob_ros2::node::{ExactCdr, ExactDecoder};
    fn decode<D: serde::de::DeserializeOwned>(b: &[u8]) -> Result<D, String> {
        let d: ExactDecoder<D> = <ExactCdr<D> as rustdds::no_key::DefaultDecoder<D>>::DECODER;
        d.decode_bytes(b, Rep::CDR_LE).map_err(|e| e.to_string())
    }
    let mut t = Twist::default();
    t.linear.x = 1.5;
    let mut b = cdr(&t);
    assert_eq!(decode::<Twist>(&b), Ok(t));
    b.extend(7.0f64.to_le_bytes());
    let e = decode::<Twist>(&b).unwrap_err();
    assert!(e.contains("8 bytes after the message"), "{e}");
    // A one-byte message padded to four.
    let mut e = cdr(&Empty::default());
    e.resize(4, 0);
    assert_eq!(decode::<Empty>(&e), Ok(Empty::default()));
    e[3] = 1;
    assert!(decode::<Empty>(&e).is_err());
}
