//! `Info_Request` answers are the same bytes whichever decoder read the request: the
//! shortcut for the canonical form, or the general decoder for any other spelling.

use crate::common;

use std::time::Instant;

use common::{addr, drain, register, session};
use simrob_protocol::{
    encode_request, encode_response, AgentRequest, CommandKeys, Request, Response,
};

#[test]
fn info_request_answers_are_byte_identical_whatever_the_spelling() {
    let mut s = session();
    let now = Instant::now();
    let a = addr("127.0.0.1:7001");
    let b = addr("127.0.0.1:7002");
    s.handle_datagram(
        a,
        register("alpha", "127.0.0.1", 7001, -1.0).as_bytes(),
        now,
    );
    s.handle_datagram(b, register("beta", "127.0.0.1", 7002, -1.0).as_bytes(), now);
    drain(&mut s);

    let canonical = encode_request(
        &Request::Agent(AgentRequest::InfoRequest {
            requester: "alpha".into(),
            requested: "beta".into(),
        }),
        &CommandKeys::default(),
    );
    // The same request as a person would write it: spaces and line breaks.
    let spelled = canonical.replace("><", ">\n  <");
    assert_ne!(canonical, spelled);
    let expected = encode_response(&Response::AgentInformation {
        key: "beta".into(),
        port: 7002,
        ip: "127.0.0.1".into(),
    })
    .into_bytes();
    for datagram in [&canonical, &spelled] {
        s.handle_datagram(a, datagram.as_bytes(), now);
        let out = drain(&mut s);
        assert_eq!(out.len(), 1, "{datagram}");
        assert_eq!(out[0].to, a);
        assert_eq!(out[0].payload, expected, "{datagram}");
    }

    // Registering again from a new port changes the answer.
    let b2 = addr("127.0.0.1:7003");
    s.handle_datagram(b, register("beta", "127.0.0.1", 7003, -1.0).as_bytes(), now);
    drain(&mut s);
    s.handle_datagram(a, canonical.as_bytes(), now);
    let out = drain(&mut s);
    let text = String::from_utf8_lossy(&out[0].payload);
    assert!(text.contains(&b2.port().to_string()), "{text}");

    // An unknown requester or subject is an error, as before.
    let unknown = canonical.replace("beta", "gamma");
    s.handle_datagram(a, unknown.as_bytes(), now);
    let out = drain(&mut s);
    let text = String::from_utf8_lossy(&out[0].payload);
    assert!(text.contains("\"gamma\" is not registered"), "{text}");
}
