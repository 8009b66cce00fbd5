//! The web viewer's limits: what it accepts from its pages (the viewer re-exports
//! [`ViewerGuard`] as `simrob_viewer::Guard`), and [`VIEWER_KEYS`], each limit's range,
//! configuration key and flag.
//!
//! One table for both ways of setting them: the server's configuration keys
//! (`viewermaxpages`, …, read by [`crate::ServerConfig::set`]) and the `--viewer-…` flags of
//! every command that serves a viewer check each value against the same range, and both start
//! from [`ViewerGuard::default`].

use std::time::Duration;

use simrob_math::Shown;

use crate::keydoc::Allowed;

/// The viewer's limits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ViewerGuard {
    /// Time a connection has to send its first request head; then it is closed.
    pub header_timeout: Duration,
    /// A WebSocket that answers no ping for this long is closed, and so is one a send to
    /// which has waited this long (a page that reads nothing).
    pub idle_timeout: Duration,
    /// Largest WebSocket message from a page, bytes.
    pub max_message: usize,
    /// Page commands a second per connection (bursts of twice as many pass).
    pub commands_per_second: f64,
    /// Connections waiting for their request head at a time; past it the one that has waited
    /// longest is closed to make room for the newcomer.
    pub max_pending: usize,
    /// The 2D view: most bodies a page is sent one by one; when more are in its view
    /// rectangle it is sent their density picture instead (23 bytes a body).
    pub max_view_bodies: usize,
    /// The 2D view: most cells of a density picture (2 bytes a cell); a cell is as many of
    /// the page's pixels as keep the picture within this.
    pub max_view_cells: usize,
    /// Pages (WebSocket connections) open at once; one more is refused (HTTP 503) until one
    /// closes. Each open page holds its own buffers and is sent every frame.
    pub max_pages: usize,
    /// The 2D view of a swarm run: most planned routes a frame carries (robots first, in
    /// entity order, then flying drones).
    pub max_view_routes: usize,
    /// The 2D view of a swarm run: most entity names a frame carries (for labels).
    pub max_view_names: usize,
    /// The 2D view of a swarm run: most frames one `step` command of a page runs.
    pub max_step_frames: u64,
}

impl Default for ViewerGuard {
    fn default() -> Self {
        ViewerGuard {
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_message: 64 << 10,
            commands_per_second: 100.0,
            max_pending: 256,
            max_view_bodies: 20_000,
            max_view_cells: 65_536,
            max_pages: 64,
            max_view_routes: 2000,
            max_view_names: 5000,
            max_step_frames: 100_000,
        }
    }
}

/// What a viewer limit's value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViewerUnit {
    /// A whole number (a count, bytes).
    Whole,
    /// A time, in seconds.
    Seconds,
    /// A rate, page commands a second.
    PerSecond,
}

/// One limit of the viewer: its configuration key, its flag, its range and what it means.
#[derive(Debug, Clone, Copy)]
pub struct ViewerKey {
    /// The configuration key, lower case (`viewermaxpages`).
    pub key: &'static str,
    /// The flag of the commands that serve a viewer (`--viewer-max-pages`).
    pub flag: &'static str,
    /// The smallest value allowed.
    pub min: f64,
    /// The largest value allowed.
    pub max: f64,
    /// What the value is.
    pub unit: ViewerUnit,
    /// `Viewer` or `2D view`: which page it concerns.
    pub view: &'static str,
    /// What it means, in a sentence (without the range or the default).
    pub meaning: &'static str,
    get: fn(&ViewerGuard) -> f64,
    put: fn(&mut ViewerGuard, f64),
}

/// Why a viewer limit's value was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ViewerValueError {
    /// Not a whole number (holds the text given).
    #[error("expected a whole number, found {0:?}")]
    NotWhole(String),
    /// Not a finite number (holds the text given).
    #[error("expected a number, found {0:?}")]
    NotNumber(String),
    /// Outside the key's range.
    #[error("must be {range}, found {}", Shown(*.found))]
    OutOfRange {
        /// The range, as [`ViewerKey::range`] says it.
        range: String,
        /// The value given.
        found: f64,
    },
}

impl ViewerKey {
    /// The range in words: `from 1 to 4096`, `from 0.1 to 3600 seconds`.
    pub fn range(&self) -> String {
        let unit = match self.unit {
            ViewerUnit::Whole => "",
            ViewerUnit::Seconds => " seconds",
            ViewerUnit::PerSecond => " commands a second",
        };
        format!("from {} to {}{unit}", Shown(self.min), Shown(self.max))
    }

    /// The values it accepts, as the configuration reference says them.
    pub fn allowed(&self) -> Allowed {
        match self.unit {
            ViewerUnit::Whole => Allowed::whole(self.min, self.max),
            ViewerUnit::Seconds | ViewerUnit::PerSecond => Allowed::range(self.min, self.max),
        }
    }

    /// Its value in `guard`.
    pub fn get(&self, guard: &ViewerGuard) -> f64 {
        (self.get)(guard)
    }

    /// Its default ([`ViewerGuard::default`]), as text.
    pub fn default_text(&self) -> String {
        Shown(self.get(&ViewerGuard::default())).to_string()
    }

    /// Sets it in `guard` to `value` if `value` is within its range (a whole number for a
    /// whole key).
    pub fn put(&self, guard: &mut ViewerGuard, value: f64) -> Result<(), ViewerValueError> {
        let whole = self.unit != ViewerUnit::Whole || value.fract() == 0.0;
        if !(value.is_finite() && whole && (self.min..=self.max).contains(&value)) {
            return Err(ViewerValueError::OutOfRange {
                range: self.range(),
                found: value,
            });
        }
        (self.put)(guard, value);
        Ok(())
    }

    /// Reads `text` as its value (a whole number for a whole key, else a finite number).
    pub fn parse(&self, text: &str) -> Result<f64, ViewerValueError> {
        let t = text.trim();
        match self.unit {
            ViewerUnit::Whole => t
                .parse::<u64>()
                .map(|n| n as f64)
                .map_err(|_| ViewerValueError::NotWhole(text.to_string())),
            ViewerUnit::Seconds | ViewerUnit::PerSecond => t
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| ViewerValueError::NotNumber(text.to_string())),
        }
    }
}

/// The viewer's limits, in the order of the flags' help and the configuration files.
pub const VIEWER_KEYS: &[ViewerKey] = &[
    ViewerKey {
        key: "viewermaxpages",
        flag: "--viewer-max-pages",
        min: 1.0,
        max: 4096.0,
        unit: ViewerUnit::Whole,
        view: "Viewer",
        meaning: "most pages (WebSocket connections) open at once; one more is refused (HTTP 503) until one closes",
        get: |g| g.max_pages as f64,
        put: |g, v| g.max_pages = v as usize,
    },
    ViewerKey {
        key: "viewermaxmessagebytes",
        flag: "--viewer-max-message-bytes",
        min: 1024.0,
        max: (1u64 << 24) as f64,
        unit: ViewerUnit::Whole,
        view: "Viewer",
        meaning: "largest WebSocket message from a page, bytes; a larger one closes the page's connection with a close frame saying so",
        get: |g| g.max_message as f64,
        put: |g, v| g.max_message = v as usize,
    },
    ViewerKey {
        key: "viewercommandspersecond",
        flag: "--viewer-commands-per-second",
        min: 1.0,
        max: 100_000.0,
        unit: ViewerUnit::PerSecond,
        view: "Viewer",
        meaning: "page commands a second per page (bursts of twice as many pass); one past it is refused and the page told",
        get: |g| g.commands_per_second,
        put: |g, v| g.commands_per_second = v,
    },
    ViewerKey {
        key: "viewerheadertimeout",
        flag: "--viewer-header-timeout",
        min: 0.1,
        max: 3600.0,
        unit: ViewerUnit::Seconds,
        view: "Viewer",
        meaning: "time a connection has to send its request head; then it is closed",
        get: |g| g.header_timeout.as_secs_f64(),
        put: |g, v| g.header_timeout = Duration::from_secs_f64(v),
    },
    ViewerKey {
        key: "viewermaxpending",
        flag: "--viewer-max-pending",
        min: 1.0,
        max: 65_536.0,
        unit: ViewerUnit::Whole,
        view: "Viewer",
        meaning: "connections waiting for their request head at once; past it the one that has waited longest is closed to make room",
        get: |g| g.max_pending as f64,
        put: |g, v| g.max_pending = v as usize,
    },
    ViewerKey {
        key: "vieweridletimeout",
        flag: "--viewer-idle-timeout",
        min: 1.0,
        max: 86_400.0,
        unit: ViewerUnit::Seconds,
        view: "Viewer",
        meaning: "time a page may answer no ping, or read nothing it is sent, before it is closed",
        get: |g| g.idle_timeout.as_secs_f64(),
        put: |g, v| g.idle_timeout = Duration::from_secs_f64(v),
    },
    ViewerKey {
        key: "viewermaxviewbodies",
        flag: "--viewer-max-view-bodies",
        min: 1.0,
        max: 1_000_000.0,
        unit: ViewerUnit::Whole,
        view: "2D view",
        meaning: "most bodies a page is sent one by one; past it the page gets their density picture",
        get: |g| g.max_view_bodies as f64,
        put: |g, v| g.max_view_bodies = v as usize,
    },
    ViewerKey {
        key: "viewermaxviewcells",
        flag: "--viewer-max-view-cells",
        min: 1024.0,
        max: (1u64 << 24) as f64,
        unit: ViewerUnit::Whole,
        view: "2D view",
        meaning: "most cells of a density picture",
        get: |g| g.max_view_cells as f64,
        put: |g, v| g.max_view_cells = v as usize,
    },
    ViewerKey {
        key: "viewermaxviewroutes",
        flag: "--viewer-max-view-routes",
        min: 0.0,
        max: 1_000_000.0,
        unit: ViewerUnit::Whole,
        view: "2D view",
        meaning: "most planned routes a frame of a swarm run carries (robots first, then flying drones)",
        get: |g| g.max_view_routes as f64,
        put: |g, v| g.max_view_routes = v as usize,
    },
    ViewerKey {
        key: "viewermaxviewnames",
        flag: "--viewer-max-view-names",
        min: 0.0,
        max: 1_000_000.0,
        unit: ViewerUnit::Whole,
        view: "2D view",
        meaning: "most entity names a frame of a swarm run carries, for labels",
        get: |g| g.max_view_names as f64,
        put: |g, v| g.max_view_names = v as usize,
    },
    ViewerKey {
        key: "viewermaxstepframes",
        flag: "--viewer-max-step-frames",
        min: 1.0,
        max: 1_000_000_000.0,
        unit: ViewerUnit::Whole,
        view: "2D view",
        meaning: "most frames of a swarm run one step command of a page runs; a larger step is refused and the page told",
        get: |g| g.max_step_frames as f64,
        put: |g, v| g.max_step_frames = v as u64,
    },
];

/// The viewer limit whose configuration key is `key` (lower case), if one is.
pub fn viewer_key(key: &str) -> Option<&'static ViewerKey> {
    VIEWER_KEYS.iter().find(|k| k.key == key)
}

impl ViewerGuard {
    /// Sets the limit whose configuration key is `key` (lower case) from its text; `None`
    /// when `key` is not one of the viewer's.
    pub fn set(&mut self, key: &str, value: &str) -> Option<Result<(), ViewerValueError>> {
        let k = viewer_key(key)?;
        Some(k.parse(value).and_then(|v| k.put(self, v)))
    }

    /// Every key with its value in this guard, as text.
    pub fn keys(&self) -> Vec<(&'static str, String)> {
        VIEWER_KEYS
            .iter()
            .map(|k| (k.key, Shown(k.get(self)).to_string()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_key_takes_its_bounds_and_refuses_past_them() {
        for k in VIEWER_KEYS {
            let mut g = ViewerGuard::default();
            let step = if k.unit == ViewerUnit::Whole {
                1.0
            } else {
                k.min * 1e-3
            };
            assert!(k.put(&mut g, k.min).is_ok() && k.put(&mut g, k.max).is_ok());
            assert_eq!(k.get(&g), k.max, "{}", k.key);
            let e = k.put(&mut g, k.min - step).unwrap_err().to_string();
            assert!(e.contains(&k.range()), "{}: {e}", k.key);
            assert!(k.put(&mut g, k.max + step.max(1.0)).is_err(), "{}", k.key);
            assert_eq!(g.set(k.key, "banana").map(|r| r.is_err()), Some(true));
            // The default is within the range and reads back as itself.
            let mut d = ViewerGuard::default();
            assert_eq!(d.set(k.key, &k.default_text()), Some(Ok(())), "{}", k.key);
            assert_eq!(d, ViewerGuard::default(), "{}", k.key);
        }
        assert_eq!(ViewerGuard::default().set("maxentities", "1"), None);
        assert!(ViewerGuard::default()
            .set("viewermaxpages", "1.5")
            .is_some_and(|r| r.is_err()));
    }
}
