//! The rules loader and evaluator, and `ini.config` / vision-stub parsing.

use simrob_futrob::rules::RuleSet;
use simrob_futrob::{
    ActionKind, Family, IniConfig, ObjectKind, Predicate, PredicateSet, Role, VisionStub,
};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/soccer/rules");

fn load(name: &str) -> RuleSet {
    let path = format!("{DIR}/{name}");
    let text = std::fs::read_to_string(&path).unwrap();
    RuleSet::parse(&text, name).unwrap_or_else(|e| panic!("{e}"))
}

fn world(true_preds: &[&str]) -> PredicateSet {
    let mut s = PredicateSet::default();
    for n in true_preds {
        let (p, _) = Predicate::lookup(n).unwrap_or_else(|| panic!("no predicate {n}"));
        s.set(p, true);
    }
    s
}

fn pick(rules: &RuleSet, true_preds: &[&str]) -> Option<(usize, ActionKind)> {
    rules.evaluate(&world(true_preds)).map(|(i, a)| (i, a.kind))
}

#[test]
fn predicate_names_are_36_plus_two_and_round_trip() {
    assert_eq!(Predicate::all().count(), Predicate::FUTROB_COUNT + 2);
    assert_eq!(Predicate::FUTROB_COUNT, 36);
    assert_eq!(
        Predicate::from_bit(36).map(Predicate::name),
        Some("partnerNearerBall")
    );
    assert_eq!(
        Predicate::from_bit(37).map(Predicate::name),
        Some("partnerBetterPlaced")
    );
    for p in Predicate::all() {
        assert_eq!(Predicate::lookup(p.name()), Some((p, false)));
    }
    assert_eq!(
        Predicate::lookup("GKNeedsRelocate"),
        Some((Predicate::GK_NEEDS_RELOCATE, true))
    );
    assert_eq!(
        Predicate::of(ObjectKind::LeftMark, Family::LastPosValid).name(),
        "leftMarkLastPosValid"
    );
    assert_eq!(
        Predicate::of(ObjectKind::OppGoal, Family::LastPosValid).name(),
        "oppGoalLastPosValid"
    );
}

#[test]
fn action_codes_are_unique_and_kick_ball_is_19() {
    assert_eq!(ActionKind::KickBall.code(), 19);
    let mut codes: Vec<i32> = ActionKind::ALL.iter().map(|a| a.code()).collect();
    codes.sort();
    codes.dedup();
    assert_eq!(codes.len(), ActionKind::ALL.len());
    for a in ActionKind::ALL {
        assert_eq!(ActionKind::from_code(a.code()), Some(a));
    }
}

#[test]
fn every_bundled_rule_file_loads() {
    let mut n = 0;
    for e in std::fs::read_dir(DIR).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        let r = load(&name);
        assert!(!r.rules().is_empty(), "{name}");
        assert!(
            r.case_warnings().is_empty(),
            "{name}: {:?}",
            r.case_warnings()
        );
        n += 1;
    }
    assert!(n >= 8, "expected the bundled rule sets, found {n}");
}

#[test]
fn kicker_picks_the_rule_the_penalty_study_describes() {
    let r = load("kicker.xml");
    assert_eq!(r.rules().len(), 5);
    // Nothing known: look for the ball.
    assert_eq!(pick(&r, &[]), Some((0, ActionKind::FindBall)));
    // Ball seen, far: walk to it.
    assert_eq!(
        pick(&r, &["ballInSight", "ballLastPosValid"]),
        Some((1, ActionKind::FollowBall))
    );
    // At the ball, goal unknown: look for the goal.
    assert_eq!(
        pick(&r, &["ballInSight", "ballLastPosValid", "ballIsMine"]),
        Some((2, ActionKind::FindOppGoal))
    );
    // The head is up looking for the goal: the ball is out of sight but still valid and mine.
    assert_eq!(
        pick(&r, &["ballLastPosValid", "ballIsMine"]),
        Some((2, ActionKind::FindOppGoal))
    );
    // Goal known, keeper unknown: look for the opponent.
    assert_eq!(
        pick(
            &r,
            &["ballLastPosValid", "ballIsMine", "oppGoalLastPosValid"]
        ),
        Some((3, ActionKind::FindOpponent))
    );
    // Everything known, goal in range: kick.
    assert_eq!(
        pick(
            &r,
            &[
                "ballLastPosValid",
                "ballIsMine",
                "oppGoalLastPosValid",
                "opponentLastPosValid",
                "goalInRange"
            ]
        ),
        Some((4, ActionKind::KickBall))
    );
    // Goal out of range: no rule holds (the running action continues).
    assert_eq!(
        pick(
            &r,
            &[
                "ballLastPosValid",
                "ballIsMine",
                "oppGoalLastPosValid",
                "opponentLastPosValid"
            ]
        ),
        None
    );
}

#[test]
fn keeper_rules_save_on_an_approaching_ball_and_watch_otherwise() {
    let r = load("penalty_keeper.xml");
    assert_eq!(pick(&r, &[]), Some((0, ActionKind::FindBall)));
    assert_eq!(
        pick(&r, &["ballInSight"]),
        Some((2, ActionKind::LookAtBall))
    );
    assert_eq!(
        pick(&r, &["ballInSight", "ballIsGettingCloser"]),
        Some((1, ActionKind::Save))
    );
    let r = load("relocation_keeper.xml");
    assert_eq!(
        pick(&r, &["gkNeedsRelocate"]),
        Some((0, ActionKind::Relocate))
    );
    assert_eq!(pick(&r, &[]), None);
    let r = load("goalkeeper.xml");
    assert_eq!(
        pick(&r, &["gkNeedsStartSaving"]),
        Some((0, ActionKind::Save))
    );
    assert_eq!(
        pick(&r, &["gkNeedsRelocate"]),
        Some((2, ActionKind::Relocate))
    );
    assert_eq!(
        pick(&r, &["gkNeedsRelocate", "ballInSight"]),
        Some((4, ActionKind::LookAtBall))
    );
}

#[test]
fn pass_rules_pass_and_receive() {
    let p = load("pass_passer.xml");
    assert_eq!(
        pick(&p, &["ballLastPosValid", "ballIsMine"]),
        Some((3, ActionKind::FindPartner))
    );
    assert_eq!(
        pick(
            &p,
            &[
                "ballLastPosValid",
                "ballIsMine",
                "partnerLastPosValid",
                "partnerInRange"
            ]
        ),
        Some((4, ActionKind::PassBall))
    );
    assert_eq!(
        pick(
            &p,
            &["ballLastPosValid", "ballInSight", "partnerNearerBall"]
        ),
        Some((1, ActionKind::SupportBall))
    );
    let r = load("pass_receiver.xml");
    // Before the pass it looks for the ball, and leaves it to the passer once seen.
    assert_eq!(pick(&r, &[]), Some((0, ActionKind::FindBall)));
    assert_eq!(
        pick(&r, &["ballInSight", "partnerNearerBall"]),
        Some((1, ActionKind::SupportBall))
    );
    assert_eq!(pick(&r, &["partnerPass"]), Some((2, ActionKind::FindBall)));
    assert_eq!(
        pick(&r, &["partnerPass", "ballInSight"]),
        Some((3, ActionKind::FollowBall))
    );
    assert_eq!(
        pick(&r, &["partnerPass", "ballInSight", "ballIsMine"]),
        Some((4, ActionKind::LookAtBall))
    );
    assert_eq!(
        pick(&r, &["ballInSight", "ballIsMine"]),
        Some((4, ActionKind::LookAtBall))
    );
}

#[test]
fn first_true_rule_wins_and_parameters_are_kept() {
    let xml = r#"<RuleSet>
  <Rule name="a"><def><and><value term="ballInSight"/><value term="ballIsMine"/></and></def><action name="kickRight"/></Rule>
  <Rule name="b"><def><or><value term="ballInSight"/><value term="partnerInSight"/></or></def><action name="walk" distance="30"/></Rule>
  <Rule name="c"><def><not><value term="ballInSight"/></not></def><action name="turn" angle="-45"/></Rule>
</RuleSet>"#;
    let r = RuleSet::parse(xml, "t.xml").unwrap();
    assert_eq!(
        pick(&r, &["ballInSight", "ballIsMine"]),
        Some((0, ActionKind::KickRight))
    );
    let (i, a) = r.evaluate(&world(&["ballInSight"])).unwrap();
    assert_eq!((i, a.param), (1, Some(30.0)));
    let (i, a) = r.evaluate(&world(&["partnerInSight"])).unwrap();
    assert_eq!((i, a.param), (1, Some(30.0)));
    let (i, a) = r.evaluate(&world(&[])).unwrap();
    assert_eq!((i, a.to_string()), (2, "turn angle=-45".to_string()));
    assert!(r.rule_holds(2, &world(&[])));
    assert_eq!(r.rules()[1].line, 3);
}

#[test]
fn lower_case_search_names_load_with_a_warning() {
    let xml = "<RuleSet>\n<Rule><def><value term=\"GKNeedsRelocate\"/></def><action name=\"Relocate\"/></Rule>\n<Rule><def><value term=\"ballInSight\"/></def>\n<action name=\"findball\"/></Rule></RuleSet>";
    let r = RuleSet::parse(xml, "case.xml").unwrap();
    let w: Vec<(u32, &str, &str)> = r
        .case_warnings()
        .iter()
        .map(|w| (w.line, w.written.as_str(), w.canonical))
        .collect();
    assert_eq!(
        w,
        vec![
            (2, "GKNeedsRelocate", "gkNeedsRelocate"),
            (2, "Relocate", "relocate"),
            (4, "findball", "findBall")
        ]
    );
    assert_eq!(r.rules()[1].action.kind, ActionKind::FindBall);
}

fn refused(xml: &str) -> String {
    RuleSet::parse(xml, "bad.xml").unwrap_err().to_string()
}

#[test]
fn malformed_rule_files_are_refused_with_file_and_line() {
    let cases: &[(&str, &str)] = &[
        ("<RuleSet>\n<Rule><def><value term=\"ballInSight\"/></def>\n<action name=\"findBall\"/>\n</RuleSet>", "bad.xml:4: not well-formed"),
        ("<Rules/>", "bad.xml:1: the root element must be <RuleSet>"),
        ("<RuleSet>\n\n<Foo/></RuleSet>", "bad.xml:3: <RuleSet> may only contain <Rule>"),
        ("<RuleSet>\n<Rule name=\"r\">\n<def>\n<value term=\"ballInSigth\"/></def><action name=\"findBall\"/></Rule></RuleSet>", "bad.xml:4: rule \"r\": unknown predicate \"ballInSigth\""),
        ("<RuleSet><Rule name=\"r\"><def><value term=\"ballInSight\"/></def>\n<action name=\"dance\"/></Rule></RuleSet>", "bad.xml:2: rule \"r\": unknown action \"dance\""),
        ("<RuleSet><Rule name=\"r\"><def><value term=\"ballInSight\"/></def>\n\n<action name=\"walk\" speed=\"3\"/></Rule></RuleSet>", "bad.xml:3: rule \"r\": action walk has no parameter \"speed\""),
        ("<RuleSet><Rule name=\"r\"><def><value term=\"ballInSight\"/></def>\n<action name=\"kickLeft\" distance=\"3\"/></Rule></RuleSet>", "bad.xml:2: rule \"r\": action kickLeft has no parameter \"distance\" (it takes no parameters)"),
        ("<RuleSet><Rule name=\"r\"><def><value term=\"ballInSight\"/></def>\n<action name=\"turnHeadVertically\" angle=\"30\"/></Rule></RuleSet>", "bad.xml:2: rule \"r\": turnHeadVertically angle=30 is out of range [-60, 0]"),
        ("<RuleSet><Rule name=\"r\"><def><value term=\"ballInSight\"/></def>\n<action name=\"turnHeadHorizontally\" angle=\"90\"/></Rule></RuleSet>", "bad.xml:2: rule \"r\": turnHeadHorizontally angle=90 is out of range [-60, 60]"),
        ("<RuleSet><Rule name=\"r\"><def><value term=\"ballInSight\"/></def>\n<action name=\"walk\" distance=\"far\"/></Rule></RuleSet>", "bad.xml:2: rule \"r\": walk distance=\"far\" is not a number"),
        ("<RuleSet>\n<Rule name=\"r\"><def>\n<and><value term=\"ballInSight\"/></and></def><action name=\"findBall\"/></Rule></RuleSet>", "bad.xml:3: rule \"r\": <and> needs two or more children (found 1)"),
        ("<RuleSet>\n<Rule name=\"r\"><def>\n<or/></def><action name=\"findBall\"/></Rule></RuleSet>", "bad.xml:3: rule \"r\": <or> needs two or more children (found 0)"),
        ("<RuleSet>\n<Rule name=\"r\"><def>\n<not><value term=\"ballInSight\"/><value term=\"ballIsMine\"/></not></def><action name=\"findBall\"/></Rule></RuleSet>", "bad.xml:3: rule \"r\": <not> needs exactly one child (found 2)"),
        ("<RuleSet>\n<Rule name=\"r\">\n<def><value term=\"ballInSight\"/><value term=\"ballIsMine\"/></def><action name=\"findBall\"/></Rule></RuleSet>", "bad.xml:3: rule \"r\": <def> needs exactly one child expression (found 2)"),
        ("<RuleSet>\n<Rule name=\"r\"><def><value term=\"ballInSight\"/></def></Rule></RuleSet>", "bad.xml:2: rule \"r\": needs exactly one <def> and one <action> (found 1 and 0)"),
        ("<RuleSet>\n<Rule name=\"r\"><def><value/></def><action name=\"findBall\"/></Rule></RuleSet>", "bad.xml:2: rule \"r\": <value> needs a term"),
        ("<RuleSet>\n<Rule name=\"r\"><def><xor/></def><action name=\"findBall\"/></Rule></RuleSet>", "bad.xml:2: rule \"r\": <xor> is not an expression"),
        ("<RuleSet>\n<Rule name=\"r\" priority=\"1\"/></RuleSet>", "bad.xml:2: unknown attribute \"priority\" on <Rule>"),
        ("<RuleSet>\n<Rule name=\"r\"><def>ball</def><action name=\"findBall\"/></Rule></RuleSet>", "bad.xml:2: unexpected text \"ball\" in <def>"),
        ("", "bad.xml:1: empty file"),
    ];
    for (xml, want) in cases {
        let got = refused(xml);
        assert!(got.starts_with(want), "\n got: {got}\nwant: {want}");
    }
}

#[test]
fn the_generic_example_with_placeholder_names_is_refused() {
    let xml = "<?xml version=\"1.0\" encoding=\"US-ASCII\" ?>\n<RuleSet>\n  <Rule name=\"regla1\" desc=\"descripcion regla1\">\n    <def>\n      <not>\n        <value term=\"predicado1\" />\n      </not>\n    </def>\n    <action name=\"accion1\" var1=\"A\" var2=\"B\" />\n  </Rule>\n</RuleSet>\n";
    assert_eq!(
        refused(xml),
        "bad.xml:6: rule \"regla1\": unknown predicate \"predicado1\""
    );
}

#[test]
fn deep_nesting_is_refused_not_overflowed() {
    let mut xml = String::from("<RuleSet><Rule><def>");
    for _ in 0..10_000 {
        xml.push_str("<not>");
    }
    let e = refused(&xml);
    assert!(e.contains("nesting deeper than"), "{e}");
}

const SEED_INI: &str = "#-----\n# Robot initial configuration file |\n#-----\n[robot_profile]\nid=1\n#roleEnum: [1=goalkeeper, 2=field_player]\nrole=1\n#Enable/disable logging\nlogEnabled=1\nlogfile=futrob.log\nlogAction=1\nlogMotors=0\nlogVision=1\nlogComm=1\nlogRules=0\n#Vision stub enable/disable\nvisionStubEnabled=0\nvisionStubSrc=objSampleData.input\n#Rules source file. Mandatory.\nrules=rules.xml\n#Automatic lookAtBall action\nautoLookAtBall=0\n";

#[test]
fn the_futrob_ini_config_loads() {
    let c = IniConfig::parse(SEED_INI, "ini.config").unwrap();
    assert_eq!((c.id, c.role), (1, Role::Goalkeeper));
    assert!(
        c.log_enabled
            && c.log_action
            && !c.log_motors
            && c.log_vision
            && c.log_comm
            && !c.log_rules
    );
    assert_eq!(
        (c.rules.as_str(), c.logfile.as_str()),
        ("rules.xml", "futrob.log")
    );
    assert!(!c.vision_stub_enabled && !c.params.auto_look_at_ball);
    assert_eq!(c.params.gk_x_min_cm, 10.0);
    let more = format!("{SEED_INI}[network]\nserver=127.0.0.1:5005\ncommPort=12000\nCOMM_TTL=5000\nGK_X_DIFF_THRESHOLD_MIN=12\n");
    let c = IniConfig::parse(&more, "ini.config").unwrap();
    assert_eq!(c.server.as_deref(), Some("127.0.0.1:5005"));
    assert_eq!(
        (c.comm_port, c.params.comm.ttl_ms, c.params.gk_x_min_cm),
        (12000, 5000, 12.0)
    );
}

#[test]
fn the_team_message_limits_are_ini_config_keys() {
    // Today's limits by default.
    let c = IniConfig::parse("id=1\nrules=r.xml\n", "ini.config").unwrap();
    assert_eq!(
        (
            c.comm_max_datagrams_per_cycle,
            c.comm_max_drop_lines_per_second
        ),
        (1024, 10)
    );
    let c = IniConfig::parse(
        "id=1\nrules=r.xml\ncommMaxDatagramsPerCycle=3\ncommMaxDropLinesPerSecond=100\n",
        "ini.config",
    )
    .unwrap();
    assert_eq!(
        (
            c.comm_max_datagrams_per_cycle,
            c.comm_max_drop_lines_per_second
        ),
        (3, 100)
    );
    for (text, want) in [
        (
            "id=1\nrules=r.xml\ncommMaxDatagramsPerCycle=0\n",
            "ini.config:3: commMaxDatagramsPerCycle=0 is out of range [1, 1048576]",
        ),
        (
            "id=1\nrules=r.xml\ncommMaxDropLinesPerSecond=many\n",
            "ini.config:3: commMaxDropLinesPerSecond must be a number",
        ),
        // A count is whole: 2.5 is refused, not cut to 2.
        (
            "id=1\nrules=r.xml\ncommMaxTeammates=2.5\n",
            "ini.config:3: commMaxTeammates must be a whole number, not \"2.5\"",
        ),
        (
            "id=1\nrules=r.xml\ncommPort=10020.5\n",
            "ini.config:3: commPort must be a whole number",
        ),
    ] {
        let got = IniConfig::parse(text, "ini.config")
            .unwrap_err()
            .to_string();
        assert!(got.starts_with(want), "\n got: {got}\nwant: {want}");
    }
}

#[test]
fn bad_configs_are_refused_with_file_and_line() {
    let cases: &[(&str, &str)] = &[
        (
            "id=1\nrules=r.xml\nrole=3\n",
            "ini.config:3: role must be 1 (goalkeeper) or 2 (field_player)",
        ),
        (
            "id=1\nrules=r.xml\n\nspeed=3\n",
            "ini.config:4: unknown key \"speed\"",
        ),
        (
            "id=1\nrules=r.xml\nid=2\n",
            "ini.config:3: id given twice (first on line 1)",
        ),
        (
            "id=0\nrules=r.xml\n",
            "ini.config:1: id=0 is out of range [1, 254]",
        ),
        (
            "id=255\nrules=r.xml\n",
            "ini.config:1: id=255 is out of range [1, 254]",
        ),
        (
            "id=1\nrules=r.xml\nlogComm=yes\n",
            "ini.config:3: logComm must be 0 or 1",
        ),
        (
            "id=1\nrules=r.xml\njust words\n",
            "ini.config:3: expected key=value",
        ),
        (
            "[robot_profile\nid=1\n",
            "ini.config:1: malformed section header",
        ),
        (
            "id=1\nrules=r.xml\nserver=localhost\n",
            "ini.config:3: server must be IP:PORT",
        ),
        (
            "id=1\nrules=r.xml\nCOMM_TTL=-5\n",
            "ini.config:3: COMM_TTL=-5 is out of range",
        ),
        ("id=1\n", "ini.config: missing rules"),
        ("rules=r.xml\n", "ini.config: missing id"),
        (
            "id=1\nrules=r.xml\nvisionStubEnabled=1\n",
            "ini.config: visionStubEnabled=1 needs visionStubSrc",
        ),
    ];
    for (text, want) in cases {
        let got = IniConfig::parse(text, "ini.config")
            .unwrap_err()
            .to_string();
        assert!(got.starts_with(want), "\n got: {got}\nwant: {want}");
    }
}

#[test]
fn the_vision_stub_plays_scenes_the_futrob_way() {
    let text = "1 , ball , 12 , 34\n1 , opp_goal , 54 , 65\n1 , partner , -10 , 15\n6 , ball , -76 , 57\n6 , OPP_GOAL , -82 , 73\n";
    let s = VisionStub::parse(text, "obj.input").unwrap();
    assert_eq!(s.scene(1).len(), 3);
    assert_eq!(s.scene(4).len(), 3, "scenes 2-5 repeat scene 1");
    let six: Vec<ObjectKind> = s.scene(6).iter().map(|o| o.object).collect();
    assert_eq!(
        six,
        vec![ObjectKind::Ball, ObjectKind::OppGoal],
        "scene 6 replaces: no partner"
    );
    assert_eq!(s.scene(100).len(), 2, "the last scene stays");
    assert_eq!(s.scene(6)[0].angle_deg, -76.0);
    let e = VisionStub::parse("1, ball, 3, 4\n2, dragon, 1, 1\n", "obj.input").unwrap_err();
    assert_eq!(e.to_string(), "obj.input:2: unknown object \"dragon\"");
    let e = VisionStub::parse("2, ball, 3, 4\n1, ball, 1, 1\n", "obj.input").unwrap_err();
    assert!(e
        .to_string()
        .starts_with("obj.input:2: scene 1 after scene 2"));
}

/// The key tables the reference page is generated from are the parser's: every documented
/// default loads and equals the default the brain starts with, each range's ends are accepted
/// and a value past them refused.
#[test]
fn the_documented_keys_are_the_parsers() {
    use simrob_futrob::config::{KEYS, PROFILE_KEYS};
    let base = "id=1\nrules=r.xml\n";
    let with = |key: &str, value: &str| {
        let text = if key == "id" || key == "rules" {
            format!(
                "{}\n{key}={value}\n",
                if key == "id" { "rules=r.xml" } else { "id=1" }
            )
        } else {
            format!("{base}{key}={value}\n")
        };
        IniConfig::parse(&text, "ini.config")
    };
    let plain = IniConfig::parse(base, "ini.config").unwrap();
    for k in PROFILE_KEYS.iter().chain(KEYS) {
        if !k.default.starts_with('(') && k.default != "id" {
            let c = with(k.name, k.default).unwrap_or_else(|e| panic!("{}: {e}", k.name));
            if k.name != "id" {
                assert_eq!(c, plain, "{}={} is not the default", k.name, k.default);
            }
        }
        if let Some((min, max)) = k.range {
            // A GK_*_MIN key may not exceed its MAX (40 and 80 by default), nor a MAX be
            // below its MIN (10 and 40): those ends meet the pair's default.
            let gk = k.name.starts_with("GK_") && k.name.contains("_DIFF_THRESHOLD_");
            if !(gk && k.name.ends_with("_MAX")) {
                assert!(
                    with(k.name, &min.to_string()).is_ok(),
                    "{} refuses {min}",
                    k.name
                );
            }
            if !(gk && k.name.ends_with("_MIN")) {
                assert!(
                    with(k.name, &max.to_string()).is_ok(),
                    "{} refuses {max}",
                    k.name
                );
            }
            let step = (max - min).abs().max(1.0) * 1e-3;
            assert!(
                with(k.name, &(min - step).to_string()).is_err(),
                "{} accepts below {min}",
                k.name
            );
            assert!(
                with(k.name, &(max + step).to_string()).is_err(),
                "{} accepts above {max}",
                k.name
            );
        }
    }
    let names: Vec<&str> = PROFILE_KEYS.iter().chain(KEYS).map(|k| k.name).collect();
    assert!(names.contains(&"searchWalkSteps") && names.contains(&"logRules"));
}

/// `rangeCalibration` names the keeper report's range correction: FutRob's camera's by
/// default (the camera a FutRob brain sees through), `none` on request or on an exact camera.
#[test]
fn range_calibration_is_a_key_futrob_by_default() {
    use simrob_futrob::RangeCalibration;
    let load = |extra: &str| IniConfig::parse(&format!("id=1\nrules=r.xml\n{extra}"), "ini.config");
    let default = load("").unwrap().params;
    assert_eq!(default.range_calibration, RangeCalibration::FutRob);
    assert_eq!(default, simrob_futrob::BrainParams::default());
    assert_eq!(
        load("rangeCalibration=none\n")
            .unwrap()
            .params
            .range_calibration,
        RangeCalibration::None
    );
    assert_eq!(
        load("[vision]\nrangeCalibration=FutRob\n")
            .unwrap()
            .params
            .range_calibration,
        RangeCalibration::FutRob
    );
    assert_eq!(
        default.on_exact_camera().range_calibration,
        RangeCalibration::None
    );
    let e = load("rangeCalibration=paper\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "ini.config:3: rangeCalibration must be futrob or none, not \"paper\""
    );
    for c in [RangeCalibration::None, RangeCalibration::FutRob] {
        assert_eq!(RangeCalibration::named(c.name()), Some(c));
    }
    // The shipped team's configs load, the field players naming the key.
    let team = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/soccer/team/");
    for name in ["keeper.config", "player2.config", "player3.config"] {
        let text = std::fs::read_to_string(format!("{team}{name}")).unwrap();
        let c = IniConfig::parse(&text, name).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.params.range_calibration, RangeCalibration::FutRob);
        assert_eq!(
            name != "keeper.config",
            text.contains("rangeCalibration=futrob")
        );
    }
}
