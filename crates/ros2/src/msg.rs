//! ROS 2 messages as serde structs whose fields follow the `.msg` definitions in order, so
//! that CDR (the encoding ROS 2 uses over DDS) lays them out byte for byte as ROS does:
//! fixed arrays without a length, sequences and strings with one.
//!
//! Each message type knows its DDS type name ([`Message::TYPE_NAME`]), the
//! `pkg::msg::dds_::Type_` spelling ROS 2's middleware gives it on the wire.

use serde::{de, Deserialize, Deserializer, Serialize, Serializer};

/// A ROS 2 message type: its DDS type name.
pub trait Message:
    Serialize + for<'de> Deserialize<'de> + Clone + std::fmt::Debug + Send + 'static
{
    /// The DDS type name, `pkg::msg::dds_::Type_`.
    const TYPE_NAME: &'static str;
}

macro_rules! ros_type {
    ($t:ty, $name:literal) => {
        impl Message for $t {
            const TYPE_NAME: &'static str = $name;
        }
    };
}

/// `builtin_interfaces/Time`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Time {
    /// Whole seconds.
    pub sec: i32,
    /// Nanoseconds, below 10⁹.
    pub nanosec: u32,
}

impl Time {
    /// The time of `seconds` (negative or non-finite times are 0; beyond `i32` seconds it
    /// saturates).
    pub fn from_secs(seconds: f64) -> Time {
        if !seconds.is_finite() || seconds <= 0.0 {
            return Time::default();
        }
        // Rounded to the nearest nanosecond, a whole second carried (9.9999999999 is 10 s).
        let whole = seconds.floor();
        let mut nanos = ((seconds - whole) * 1e9).round();
        let mut sec = whole;
        if nanos >= 1e9 {
            sec += 1.0;
            nanos -= 1e9;
        }
        if sec >= f64::from(i32::MAX) {
            return Time {
                sec: i32::MAX,
                nanosec: 999_999_999,
            };
        }
        Time {
            sec: sec as i32,
            nanosec: nanos as u32,
        }
    }

    /// The time in seconds.
    pub fn as_secs(&self) -> f64 {
        f64::from(self.sec) + f64::from(self.nanosec) * 1e-9
    }
}

/// `std_msgs/Header`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Header {
    /// When the data was taken (simulated time).
    pub stamp: Time,
    /// The frame the data is in.
    pub frame_id: String,
}

/// `geometry_msgs/Vector3` (and, with the same layout, `geometry_msgs/Point`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq)]
pub struct Vector3 {
    /// x.
    pub x: f64,
    /// y.
    pub y: f64,
    /// z.
    pub z: f64,
}

/// `geometry_msgs/Point`: the layout of [`Vector3`].
pub type Point = Vector3;

/// `geometry_msgs/Quaternion`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
pub struct Quaternion {
    /// x.
    pub x: f64,
    /// y.
    pub y: f64,
    /// z.
    pub z: f64,
    /// w.
    pub w: f64,
}

impl Default for Quaternion {
    fn default() -> Self {
        Quaternion {
            x: 0.0,
            y: 0.0,
            z: 0.0,
            w: 1.0,
        }
    }
}

impl Quaternion {
    /// A rotation of `yaw` radians about z.
    pub fn from_yaw(yaw: f64) -> Quaternion {
        let (s, c) = (yaw / 2.0).sin_cos();
        Quaternion {
            x: 0.0,
            y: 0.0,
            z: s,
            w: c,
        }
    }

    /// The rotation of roll, pitch, yaw (x, y, z angles applied in that order, extrinsic:
    /// R = Rz(yaw)·Ry(pitch)·Rx(roll)).
    pub fn from_rpy(roll: f64, pitch: f64, yaw: f64) -> Quaternion {
        let (sr, cr) = (roll / 2.0).sin_cos();
        let (sp, cp) = (pitch / 2.0).sin_cos();
        let (sy, cy) = (yaw / 2.0).sin_cos();
        Quaternion {
            x: sr * cp * cy - cr * sp * sy,
            y: cr * sp * cy + sr * cp * sy,
            z: cr * cp * sy - sr * sp * cy,
            w: cr * cp * cy + sr * sp * sy,
        }
    }

    /// The heading (rotation about z) of this rotation.
    pub fn yaw(&self) -> f64 {
        (2.0 * (self.w * self.z + self.x * self.y))
            .atan2(1.0 - 2.0 * (self.y * self.y + self.z * self.z))
    }
}

/// `geometry_msgs/Pose`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq)]
pub struct Pose {
    /// Position.
    pub position: Point,
    /// Orientation.
    pub orientation: Quaternion,
}

/// `geometry_msgs/PoseStamped`: RViz's "2D Goal Pose" tool sends one on `goal_pose`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct PoseStamped {
    /// Stamp and frame.
    pub header: Header,
    /// The pose.
    pub pose: Pose,
}
ros_type!(PoseStamped, "geometry_msgs::msg::dds_::PoseStamped_");

/// `geometry_msgs/Twist`: velocities in the robot's frame (`base_link`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq)]
pub struct Twist {
    /// m/s.
    pub linear: Vector3,
    /// rad/s.
    pub angular: Vector3,
}
ros_type!(Twist, "geometry_msgs::msg::dds_::Twist_");

/// A 6×6 covariance (`float64[36]`, row-major), a CDR fixed array: 36 doubles, no length.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Covariance(pub [f64; 36]);

impl Default for Covariance {
    fn default() -> Self {
        Covariance([0.0; 36])
    }
}

impl Serialize for Covariance {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeTuple;
        let mut t = s.serialize_tuple(36)?;
        for v in &self.0 {
            t.serialize_element(v)?;
        }
        t.end()
    }
}

impl<'de> Deserialize<'de> for Covariance {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = Covariance;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("36 doubles")
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Covariance, A::Error> {
                let mut c = [0.0; 36];
                for (i, slot) in c.iter_mut().enumerate() {
                    *slot = seq
                        .next_element()?
                        .ok_or_else(|| de::Error::invalid_length(i, &self))?;
                }
                Ok(Covariance(c))
            }
        }
        d.deserialize_tuple(36, V)
    }
}

/// `geometry_msgs/PoseWithCovariance`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq)]
pub struct PoseWithCovariance {
    /// The pose.
    pub pose: Pose,
    /// Its covariance (x, y, z, roll, pitch, yaw).
    pub covariance: Covariance,
}

/// `geometry_msgs/TwistWithCovariance`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq)]
pub struct TwistWithCovariance {
    /// The twist.
    pub twist: Twist,
    /// Its covariance.
    pub covariance: Covariance,
}

/// `nav_msgs/Odometry`: the pose in `header.frame_id` (`odom`), the twist in
/// `child_frame_id` (`base_link`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Odometry {
    /// Stamp and the pose's frame.
    pub header: Header,
    /// The twist's frame.
    pub child_frame_id: String,
    /// The pose.
    pub pose: PoseWithCovariance,
    /// The twist.
    pub twist: TwistWithCovariance,
}
ros_type!(Odometry, "nav_msgs::msg::dds_::Odometry_");

/// `geometry_msgs/Transform`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq)]
pub struct Transform {
    /// Translation.
    pub translation: Vector3,
    /// Rotation.
    pub rotation: Quaternion,
}

/// `geometry_msgs/TransformStamped`: `child_frame_id`'s pose in `header.frame_id`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct TransformStamped {
    /// Stamp and parent frame.
    pub header: Header,
    /// Child frame.
    pub child_frame_id: String,
    /// The child's pose in the parent.
    pub transform: Transform,
}

/// `tf2_msgs/TFMessage`, what `/tf` and `/tf_static` carry.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct TFMessage {
    /// The transforms.
    pub transforms: Vec<TransformStamped>,
}
ros_type!(TFMessage, "tf2_msgs::msg::dds_::TFMessage_");

/// `rosgraph_msgs/Clock`: simulated time on `/clock`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Clock {
    /// The simulated time.
    pub clock: Time,
}
ros_type!(Clock, "rosgraph_msgs::msg::dds_::Clock_");

/// `sensor_msgs/Range`: one sonar's reading.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Range {
    /// Stamp and the sensor's frame.
    pub header: Header,
    /// 0 ultrasound, 1 infrared.
    pub radiation_type: u8,
    /// The cone's full angle, radians.
    pub field_of_view: f32,
    /// Metres.
    pub min_range: f32,
    /// Metres.
    pub max_range: f32,
    /// Metres.
    pub range: f32,
}
ros_type!(Range, "sensor_msgs::msg::dds_::Range_");

impl Range {
    /// `radiation_type` of a sonar.
    pub const ULTRASOUND: u8 = 0;
}

/// `sensor_msgs/LaserScan`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct LaserScan {
    /// Stamp and the scanner's frame.
    pub header: Header,
    /// Radians.
    pub angle_min: f32,
    /// Radians.
    pub angle_max: f32,
    /// Radians between rays.
    pub angle_increment: f32,
    /// Seconds between rays.
    pub time_increment: f32,
    /// Seconds between scans.
    pub scan_time: f32,
    /// Metres.
    pub range_min: f32,
    /// Metres.
    pub range_max: f32,
    /// Metres, one per ray.
    pub ranges: Vec<f32>,
    /// One per ray, or none.
    pub intensities: Vec<f32>,
}
ros_type!(LaserScan, "sensor_msgs::msg::dds_::LaserScan_");

/// `std_msgs/MultiArrayDimension`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct MultiArrayDimension {
    /// Label.
    pub label: String,
    /// Size.
    pub size: u32,
    /// Stride.
    pub stride: u32,
}

/// `std_msgs/MultiArrayLayout`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct MultiArrayLayout {
    /// Dimensions.
    pub dim: Vec<MultiArrayDimension>,
    /// Offset of the first element.
    pub data_offset: u32,
}

/// `std_msgs/Float64MultiArray`: raw wheel speeds, as ros2_control's forward command
/// controllers take them.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Float64MultiArray {
    /// Layout (ignored when read: the data is taken as a flat list).
    pub layout: MultiArrayLayout,
    /// Values.
    pub data: Vec<f64>,
}
ros_type!(Float64MultiArray, "std_msgs::msg::dds_::Float64MultiArray_");

/// `std_msgs/Empty`: a step trigger in lockstep.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Empty {
    /// ROS 2 gives an empty message one `uint8` member on the wire.
    pub structure_needs_at_least_one_member: u8,
}
ros_type!(Empty, "std_msgs::msg::dds_::Empty_");

/// `std_msgs/Bool`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bool {
    /// The value.
    pub data: bool,
}
ros_type!(Bool, "std_msgs::msg::dds_::Bool_");

/// `std_msgs/Int32MultiArray`: a FutRob match's score.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Int32MultiArray {
    /// Layout (one labelled dimension).
    pub layout: MultiArrayLayout,
    /// Values.
    pub data: Vec<i32>,
}
ros_type!(Int32MultiArray, "std_msgs::msg::dds_::Int32MultiArray_");

/// `std_msgs/String`: a FutRob match's events, one line each.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct Text {
    /// The text.
    pub data: String,
}
ros_type!(Text, "std_msgs::msg::dds_::String_");
