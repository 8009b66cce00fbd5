//! A fast path for the request agents send most: `Info_Request`, in exactly the form
//! [`simrob_protocol::encode_request`] writes it.
//!
//! The general decoder builds an element tree for every datagram; at tens of thousands of
//! requests a second that was most of the server's own work. [`InfoRequestForm`] matches a
//! datagram byte for byte against the canonical encoding (the configured command names
//! included) with two plain keys in it, and hands back the request without allocating a
//! tree. Anything else — other requests, other spacing, a key with characters XML could
//! escape or trim, several requests in one datagram — returns `None`, and the general
//! decoder runs. It is a shortcut, not a second parser: for the datagrams it accepts, the
//! general decoder gives the same request (tests compare both).

use simrob_protocol::{encode_request, AgentRequest, CommandKeys, Request};

const REQUESTER: &str = "REQUESTER0MARK";
const REQUESTED: &str = "REQUESTED0MARK";

/// The canonical `Info_Request` datagram, cut around its two keys.
#[derive(Debug, Clone)]
pub(crate) struct InfoRequestForm {
    /// Text before the first key, between the keys, after the second.
    pieces: [Vec<u8>; 3],
    /// Whether the requester's key comes first.
    requester_first: bool,
}

/// Whether every byte of `key` reads back unchanged from XML text: letters, digits and
/// `_ - . :` (no markup, no entity, no space to trim).
fn plain_key(key: &[u8]) -> bool {
    !key.is_empty()
        && key
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':'))
}

impl InfoRequestForm {
    /// The form for the configured command names.
    pub(crate) fn new(keys: &CommandKeys) -> Option<Self> {
        let text = encode_request(
            &Request::Agent(AgentRequest::InfoRequest {
                requester: REQUESTER.into(),
                requested: REQUESTED.into(),
            }),
            keys,
        );
        let a = text.find(REQUESTER)?;
        let b = text.find(REQUESTED)?;
        let (first, first_len, second, second_len) = if a < b {
            (a, REQUESTER.len(), b, REQUESTED.len())
        } else {
            (b, REQUESTED.len(), a, REQUESTER.len())
        };
        let bytes = text.as_bytes();
        let pieces = [
            bytes[..first].to_vec(),
            bytes[first + first_len..second].to_vec(),
            bytes[second + second_len..].to_vec(),
        ];
        // A key ends at the first `<`, which must begin the next piece.
        if pieces[1].first() != Some(&b'<') || pieces[2].first() != Some(&b'<') {
            return None;
        }
        Some(InfoRequestForm {
            pieces,
            requester_first: a < b,
        })
    }

    /// The request, when `data` is exactly the canonical form with two plain keys.
    pub(crate) fn matches(&self, data: &[u8]) -> Option<Request> {
        let rest = data.strip_prefix(self.pieces[0].as_slice())?;
        let end = rest.iter().position(|&b| b == b'<')?;
        let (first, rest) = rest.split_at(end);
        let rest = rest.strip_prefix(self.pieces[1].as_slice())?;
        let end = rest.iter().position(|&b| b == b'<')?;
        let (second, rest) = rest.split_at(end);
        if rest != self.pieces[2].as_slice() || !plain_key(first) || !plain_key(second) {
            return None;
        }
        // Plain keys are ASCII.
        let first = std::str::from_utf8(first).ok()?.to_string();
        let second = std::str::from_utf8(second).ok()?.to_string();
        let (requester, requested) = if self.requester_first {
            (first, second)
        } else {
            (second, first)
        };
        Some(Request::Agent(AgentRequest::InfoRequest {
            requester,
            requested,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use simrob_protocol::decode_datagram;

    fn info(requester: &str, requested: &str) -> Request {
        Request::Agent(AgentRequest::InfoRequest {
            requester: requester.into(),
            requested: requested.into(),
        })
    }

    #[test]
    fn the_canonical_form_decodes_as_the_general_decoder_does() {
        let keys = CommandKeys::default();
        let form = InfoRequestForm::new(&keys).unwrap();
        for (a, b) in [
            ("robot1", "robot1"),
            ("load123-999", "load123-0"),
            ("lab42:robot_1.x", "A"),
        ] {
            let data = encode_request(&info(a, b), &keys);
            let fast = form.matches(data.as_bytes());
            assert_eq!(fast, Some(info(a, b)), "{data}");
            let general = decode_datagram(data.as_bytes(), &keys);
            assert_eq!(general.len(), 1);
            assert_eq!(general[0].as_ref().ok(), fast.as_ref());
        }
    }

    #[test]
    fn configured_command_names_are_followed() {
        let mut keys = CommandKeys::default();
        assert!(keys.set("commandinforequestkey", "Who_Is"));
        let form = InfoRequestForm::new(&keys).unwrap();
        let data = encode_request(&info("a", "b"), &keys);
        assert!(data.contains("Who_Is"), "{data}");
        assert_eq!(form.matches(data.as_bytes()), Some(info("a", "b")));
        let default = encode_request(&info("a", "b"), &CommandKeys::default());
        assert_eq!(form.matches(default.as_bytes()), None);
    }

    #[test]
    fn anything_else_goes_to_the_general_decoder() {
        let keys = CommandKeys::default();
        let form = InfoRequestForm::new(&keys).unwrap();
        let good = encode_request(&info("robot1", "robot2"), &keys);
        let mut refused = vec![
            // Keys XML would change or that need the decoder's judgement.
            encode_request(&info("robot 1", "robot2"), &keys),
            encode_request(&info("r&amp;1", "robot2"), &keys),
            encode_request(&info("rob\u{e9}t", "robot2"), &keys),
            // Two requests, truncated, trailing bytes, other spacing, another request.
            format!("{good}{good}"),
            good[..good.len() - 1].to_string(),
            format!("{good} "),
            format!(" {good}"),
            good.replace("><", ">\n<"),
            good.replace("Info_Request", "Info_Requests"),
        ];
        // Every single-byte deletion of the canonical form.
        for i in 0..good.len() {
            let mut s = good.clone().into_bytes();
            s.remove(i);
            refused.push(String::from_utf8_lossy(&s).into_owned());
        }
        for data in refused {
            if let Some(fast) = form.matches(data.as_bytes()) {
                // Accepted only if the general decoder reads the very same request.
                let general = decode_datagram(data.as_bytes(), &keys);
                assert_eq!(general.len(), 1, "{data}");
                assert_eq!(general[0].as_ref().ok(), Some(&fast), "{data}");
            }
        }
        assert_eq!(form.matches(format!("{good}{good}").as_bytes()), None);
        assert_eq!(form.matches(b""), None);
    }
}
