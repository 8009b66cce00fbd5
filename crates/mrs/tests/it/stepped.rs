//! A stepped Mobile Robot Simulator server on 127.0.0.1 without map files: shared by this
//! crate's tests and, by `#[path]`, by the netbed crate's.

use simrob_mrs::flat::{FlatPose, Map};
use simrob_mrs::{MrsConfig, MrsCore, MrsHandle, MrsServer, NoFiles, ShellOptions};

/// A stepped server on `map`, its robots starting at `start` (the server's default if `None`).
pub fn serve_stepped(map: Map, start: Option<FlatPose>) -> MrsHandle {
    let core = MrsCore::new(
        map,
        MrsConfig {
            start,
            stepped: true,
            ..MrsConfig::default()
        },
    );
    MrsServer::bind(
        "127.0.0.1:0",
        core,
        Box::new(NoFiles),
        ShellOptions::default(),
    )
    .expect("bind")
    .spawn()
    .expect("spawn")
}
