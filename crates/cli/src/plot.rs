//! `simrob plot`: figures for papers, as PNG or SVG (chosen by the output's extension), with
//! plotters. Three kinds: the trajectories of entities over the field or map of a recording,
//! recorded quantities over time, and a sweep's metric against a parameter with its spread
//! over seeds.
//!
//! Text is drawn with a TrueType font read at run time: `SIMROB_FONT`, else Debian's DejaVu
//! Sans (`fonts-dejavu-core`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::register_font;
use simrob_viewer::record::RecordingReader;
use simrob_viewer::Frame;

/// `simrob plot`.
#[derive(clap::Subcommand)]
pub enum PlotCommand {
    /// Trajectories (x–y, metres) of robots and balls over the field or map of a recording.
    Trajectory {
        /// A recording (`simrob serve --record`, `simrob swarm run --record`).
        recording: PathBuf,
        /// Entities to draw (default: every robot and ball, at most 12).
        #[arg(long = "entity", short = 'e', value_name = "ID")]
        entities: Vec<u32>,
        #[command(flatten)]
        out: OutArgs,
    },
    /// Recorded quantities over simulated time: ENTITY.QUANTITY, QUANTITY one of x y z (m),
    /// roll pitch yaw (rad), vx vy vz speed (m/s), wx wy wz (rad/s; velocities of the entity's
    /// first body; a swarm recording keeps none: there they are worked out from successive
    /// snapshots' poses, at the middle of each interval).
    Series {
        /// A recording.
        recording: PathBuf,
        /// What to draw, e.g. `3.x` or `8.speed`; may be repeated.
        #[arg(
            long = "series",
            short = 's',
            value_name = "ENTITY.QUANTITY",
            required = true
        )]
        series: Vec<String>,
        #[command(flatten)]
        out: OutArgs,
    },
    /// A sweep's metric against a parameter (`simrob batch` results.csv): the mean over
    /// seeds with ±1 standard deviation (or min–max), one line per value of --group. A
    /// point whose runs differ in another parameter (the sweep.json beside the results names
    /// them) or scenario is refused (--group it); failed runs are left out, and said to be.
    Batch {
        /// The sweep's results.csv.
        results: PathBuf,
        /// The parameter on the x axis (a numeric column).
        #[arg(long, value_name = "COLUMN")]
        x: String,
        /// The metric on the y axis (a numeric column).
        #[arg(long, value_name = "COLUMN")]
        y: String,
        /// Column(s) whose values get one line each (e.g. scenario, another parameter).
        #[arg(long, value_name = "COLUMN")]
        group: Vec<String>,
        /// The spread drawn around the mean.
        #[arg(long, value_name = "KIND", value_enum, default_value = "std")]
        spread: Spread,
        /// The x axis's label, with its unit (default: the --x column's name).
        #[arg(long, value_name = "TEXT")]
        x_label: Option<String>,
        /// The y axis's label, with its unit (default: the --y column's name).
        #[arg(long, value_name = "TEXT")]
        y_label: Option<String>,
        /// Largest results file read, bytes, at least 1 (default 1073741824, a sweep's
        /// 1,000,000 rows); a larger one is refused.
        #[arg(long, value_name = "BYTES", value_parser = crate::flags::count(1u64, u64::MAX))]
        max_results_bytes: Option<u64>,
        #[command(flatten)]
        out: OutArgs,
    },
}

/// The spread of a batch plot.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Spread {
    /// ±1 standard deviation over seeds.
    Std,
    /// Smallest to largest value over seeds.
    Minmax,
}

/// Where and how big.
#[derive(clap::Args)]
pub struct OutArgs {
    /// The figure: FILE.png or FILE.svg.
    #[arg(long, short = 'o', value_name = "FILE")]
    out: PathBuf,
    /// Old spelling of `--out`.
    #[arg(long = "output", value_name = "FILE", hide = true,
          value_parser = crate::flags::renamed("output", "out", ""))]
    old_output: Option<String>,
    /// Size in pixels, WIDTHxHEIGHT (text is sized for it: 1200x900 prints well at one
    /// column of a paper).
    #[arg(long, value_name = "WxH", default_value = "1200x900", value_parser = parse_size)]
    size: (u32, u32),
    /// A title above the plot.
    #[arg(long)]
    title: Option<String>,
}

/// A line of a figure.
struct Line {
    label: String,
    points: Vec<(f64, f64)>,
    /// (x, low, high) error bars.
    bars: Vec<(f64, f64, f64)>,
    /// Mark the last point (the end of a trajectory) or every point (a sweep).
    marks: Marks,
}

#[derive(Clone, Copy, PartialEq)]
enum Marks {
    End,
    All,
}

/// What to draw, before drawing.
struct Figure {
    title: Option<String>,
    x_label: String,
    y_label: String,
    equal_aspect: bool,
    /// Filled outlines in the background (a field's boxes, a map's walls).
    shapes: Vec<Vec<(f64, f64)>>,
    lines: Vec<Line>,
}

pub fn run(cmd: PlotCommand) -> Result<()> {
    let (figure, out) = match cmd {
        PlotCommand::Trajectory {
            recording,
            entities,
            out,
        } => (trajectory(&recording, &entities, out.title.clone())?, out),
        PlotCommand::Series {
            recording,
            series,
            out,
        } => (series_figure(&recording, &series, out.title.clone())?, out),
        PlotCommand::Batch {
            results,
            x,
            y,
            group,
            spread,
            x_label,
            y_label,
            max_results_bytes,
            out,
        } => {
            let f = batch_figure(
                &results,
                max_results_bytes.unwrap_or(crate::batch::DEFAULT_MAX_RESULTS_FILE),
                &x,
                &y,
                &group,
                spread,
                x_label,
                y_label,
                out.title.clone(),
            )?;
            (f, out)
        }
    };
    draw_to(&figure, &out.out, out.size)?;
    println!("wrote {}", out.out.display());
    Ok(())
}

/// `--size WxH`, each 200 to 10000 pixels (anything else does not parse: exit status 2).
fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let parsed = s
        .split_once(['x', 'X'])
        .and_then(|(w, h)| Some((w.trim().parse::<u32>().ok()?, h.trim().parse::<u32>().ok()?)));
    match parsed {
        Some((w, h)) if (200..=10_000).contains(&w) && (200..=10_000).contains(&h) => Ok((w, h)),
        _ => Err(format!(
            "{s:?}: expected WIDTHxHEIGHT in pixels, each 200 to 10000, e.g. 1200x900"
        )),
    }
}

/// At most this many points per line: long recordings are thinned evenly.
const MAX_POINTS: usize = 4000;

fn thin(points: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    if points.len() <= MAX_POINTS {
        return points;
    }
    let step = points.len().div_ceil(MAX_POINTS);
    let last = points.last().copied();
    let mut out: Vec<(f64, f64)> = points.into_iter().step_by(step).collect();
    if out.last().copied() != last {
        out.extend(last);
    }
    out
}

/// The footprint of a box body seen from above.
fn footprint(p: [f64; 3], r: [f64; 3], size: [f64; 3]) -> Vec<(f64, f64)> {
    let (s, c) = r[2].sin_cos();
    let (hx, hy) = (size[0] / 2.0, size[1] / 2.0);
    [(-hx, -hy), (hx, -hy), (hx, hy), (-hx, hy)]
        .iter()
        .map(|&(x, y)| (p[0] + c * x - s * y, p[1] + s * x + c * y))
        .collect()
}

/// Every static body of `frame` as an outline (boxes as rectangles, spheres and cylinders as
/// their bounding squares), largest first.
fn static_shapes(frame: &Frame) -> Vec<Vec<(f64, f64)>> {
    let statics: Vec<u32> = frame
        .entities
        .iter()
        .filter(|e| e.kind == "Field")
        .map(|e| e.id)
        .collect();
    let mut shapes: Vec<(f64, Vec<(f64, f64)>)> = frame
        .bodies
        .iter()
        .filter(|b| statics.contains(&b.e))
        .map(|b| {
            let size = match b.shape.as_str() {
                "Box" => b.dims,
                _ => [2.0 * b.dims[0], 2.0 * b.dims[0], 0.0],
            };
            (size[0] * size[1], footprint(b.p, b.r, size))
        })
        .collect();
    shapes.sort_by(|a, b| b.0.total_cmp(&a.0));
    shapes.into_iter().map(|(_, s)| s).collect()
}

fn open(path: &Path) -> Result<RecordingReader> {
    let cannot = || format!("cannot read the recording {}", path.display());
    // Looked at before it is opened: opening a FIFO would wait for a writer.
    crate::shell::regular_file(path).with_context(cannot)?;
    let r = RecordingReader::open(path).with_context(cannot)?;
    if r.is_empty() {
        bail!("{}: the recording has no frames", path.display());
    }
    crate::replay::warn_if_unfinished(&r, "plotted");
    Ok(r)
}

fn trajectory(path: &Path, wanted: &[u32], title: Option<String>) -> Result<Figure> {
    let mut reader = open(path)?;
    let first = reader.frame(0)?;
    let shapes = static_shapes(&first);
    let mut kinds: BTreeMap<u32, String> = BTreeMap::new();
    let mut paths: BTreeMap<u32, Vec<(f64, f64)>> = BTreeMap::new();
    reader.for_each(|f| {
        for e in &f.entities {
            let Some(p) = e.p else { continue };
            if e.kind == "Field" || (!wanted.is_empty() && !wanted.contains(&e.id)) {
                continue;
            }
            if wanted.is_empty() && !paths.contains_key(&e.id) && paths.len() >= 12 {
                continue;
            }
            kinds.entry(e.id).or_insert_with(|| e.kind.clone());
            paths.entry(e.id).or_default().push((p[0], p[1]));
        }
        Ok(())
    })?;
    for id in wanted {
        if !paths.contains_key(id) {
            bail!(
                "{}: entity {id} has no pose in the recording",
                path.display()
            );
        }
    }
    if paths.is_empty() {
        bail!("{}: no robot or ball in the recording", path.display());
    }
    let lines = paths
        .into_iter()
        .map(|(id, points)| Line {
            label: format!(
                "{} {id}",
                kinds
                    .get(&id)
                    .map_or("entity", |k| k.as_str())
                    .to_lowercase()
            ),
            points: thin(points),
            bars: Vec::new(),
            marks: Marks::End,
        })
        .collect();
    Ok(Figure {
        title,
        x_label: "x (m)".into(),
        y_label: "y (m)".into(),
        equal_aspect: true,
        shapes,
        lines,
    })
}

/// Reads one quantity of an entity from a frame.
type Reader = fn(&Frame, u32) -> Option<f64>;

/// Reads an entity's position (`pos`) or rotation (roll, pitch, yaw) from a frame.
fn pose(f: &Frame, id: u32, pos: bool) -> Option<[f64; 3]> {
    let e = f.entities.iter().find(|e| e.id == id)?;
    if pos {
        e.p
    } else {
        e.r
    }
}

/// A quantity of a frame: its unit and how to read it.
fn quantity(name: &str) -> Option<(&'static str, Reader)> {
    fn body(f: &Frame, id: u32) -> Option<&simrob_viewer::FrameBody> {
        f.bodies.iter().filter(|b| b.e == id).min_by_key(|b| b.id)
    }
    Some(match name {
        "x" => ("m", |f, id| pose(f, id, true).map(|p| p[0])),
        "y" => ("m", |f, id| pose(f, id, true).map(|p| p[1])),
        "z" => ("m", |f, id| pose(f, id, true).map(|p| p[2])),
        "roll" => ("rad", |f, id| pose(f, id, false).map(|r| r[0])),
        "pitch" => ("rad", |f, id| pose(f, id, false).map(|r| r[1])),
        "yaw" => ("rad", |f, id| pose(f, id, false).map(|r| r[2])),
        "vx" => ("m/s", |f, id| body(f, id).map(|b| b.v[0])),
        "vy" => ("m/s", |f, id| body(f, id).map(|b| b.v[1])),
        "vz" => ("m/s", |f, id| body(f, id).map(|b| b.v[2])),
        "speed" => ("m/s", |f, id| {
            body(f, id).map(|b| b.v[0].hypot(b.v[1]).hypot(b.v[2]))
        }),
        "wx" => ("rad/s", |f, id| body(f, id).map(|b| b.w[0])),
        "wy" => ("rad/s", |f, id| body(f, id).map(|b| b.w[1])),
        "wz" => ("rad/s", |f, id| body(f, id).map(|b| b.w[2])),
        _ => return None,
    })
}

/// A velocity worked out from successive poses, for a recording that keeps none: whether it
/// is of the position (else of the rotation) and which axis (`None`: the speed).
fn derived(name: &str) -> Option<(bool, Option<usize>)> {
    Some(match name {
        "vx" => (true, Some(0)),
        "vy" => (true, Some(1)),
        "vz" => (true, Some(2)),
        "speed" => (true, None),
        "wx" => (false, Some(0)),
        "wy" => (false, Some(1)),
        "wz" => (false, Some(2)),
        _ => return None,
    })
}

/// Whether `r` keeps its bodies' velocities: a swarm recording (or one written from a swarm
/// run, `--record-format viewer`, or exported from one) keeps only poses.
fn keeps_velocities(r: &RecordingReader) -> bool {
    r.kind() != simrob_viewer::record::Kind::Swarm
        && !r.header().source.starts_with("simrob swarm: ")
}

/// The rate of change of `samples` (time, pose) between successive samples, at the middle of
/// each interval: of axis `axis`, or the length of the change when `None`. Angles (`angle`)
/// change by the shorter way round.
fn rates(samples: &[(f64, [f64; 3])], angle: bool, axis: Option<usize>) -> Vec<(f64, f64)> {
    samples
        .windows(2)
        .filter(|w| w[1].0 > w[0].0)
        .map(|w| {
            let ((t0, a), (t1, b)) = (w[0], w[1]);
            let d: [f64; 3] = std::array::from_fn(|k| {
                let d = b[k] - a[k];
                if angle {
                    (d + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU)
                        - std::f64::consts::PI
                } else {
                    d
                }
            });
            let change = axis.map_or_else(|| d[0].hypot(d[1]).hypot(d[2]), |k| d[k]);
            ((t0 + t1) / 2.0, change / (t1 - t0))
        })
        .collect()
}

/// How a series is read: a quantity of each frame, or a velocity from successive poses.
enum Sampled {
    Read(Reader, Vec<(f64, f64)>),
    Rate {
        position: bool,
        axis: Option<usize>,
        samples: Vec<(f64, [f64; 3])>,
    },
}

/// A series to draw: its label, its unit and its points (time, value).
type Series = (String, &'static str, Vec<(f64, f64)>);

/// The points of each series of `specs` (`ENTITY.QUANTITY`) in the recording `path`, with
/// their labels and units.
fn series_points(path: &Path, specs: &[String]) -> Result<Vec<Series>> {
    let mut parsed = Vec::new();
    for s in specs {
        let p = s.split_once('.').and_then(|(e, q)| {
            Some((e.trim().parse::<u32>().ok()?, q.trim(), quantity(q.trim())?))
        });
        let Some((id, name, (unit, read))) = p else {
            bail!("--series {s:?}: expected ENTITY.QUANTITY, e.g. 3.x, with QUANTITY one of x y z roll pitch yaw vx vy vz speed wx wy wz");
        };
        parsed.push((id, name.to_string(), unit, read));
    }
    let mut reader = open(path)?;
    let measured = keeps_velocities(&reader);
    let mut wanted = Vec::new();
    for (id, name, unit, read) in parsed {
        let how = match derived(&name).filter(|_| !measured) {
            Some((position, axis)) => Sampled::Rate {
                position,
                axis,
                samples: Vec::new(),
            },
            None => Sampled::Read(read, Vec::new()),
        };
        let label = match how {
            Sampled::Rate { .. } => format!("entity {id} {name} (from poses)"),
            Sampled::Read(..) => format!("entity {id} {name}"),
        };
        wanted.push((label, unit, id, how));
    }
    reader.for_each(|f| {
        for (_, _, id, how) in wanted.iter_mut() {
            match how {
                Sampled::Read(read, points) => {
                    if let Some(v) = read(f, *id) {
                        points.push((f.time, v));
                    }
                }
                Sampled::Rate {
                    position, samples, ..
                } => {
                    if let Some(p) = pose(f, *id, *position) {
                        samples.push((f.time, p));
                    }
                }
            }
        }
        Ok(())
    })?;
    let mut out = Vec::new();
    for (label, unit, _, how) in wanted {
        let points = match how {
            Sampled::Read(_, points) => points,
            Sampled::Rate {
                position,
                axis,
                samples,
            } => {
                if samples.len() == 1 {
                    bail!(
                        "{}: {label} needs two snapshots of the entity, and the recording has one",
                        path.display()
                    );
                }
                rates(&samples, !position, axis)
            }
        };
        if points.is_empty() {
            bail!("{}: {label} is not in the recording", path.display());
        }
        out.push((label, unit, points));
    }
    Ok(out)
}

fn series_figure(path: &Path, specs: &[String], title: Option<String>) -> Result<Figure> {
    let mut units: Vec<&str> = Vec::new();
    let mut lines = Vec::new();
    for (label, unit, points) in series_points(path, specs)? {
        if !units.contains(&unit) {
            units.push(unit);
        }
        lines.push(Line {
            label,
            points: thin(points),
            bars: Vec::new(),
            marks: Marks::End,
        });
    }
    let y_label = if units.len() == 1 {
        format!("value ({})", units[0])
    } else {
        format!("value ({})", units.join(", "))
    };
    Ok(Figure {
        title,
        x_label: "simulated time (s)".into(),
        y_label,
        equal_aspect: false,
        shapes: Vec::new(),
        lines,
    })
}

/// Splits one CSV line (RFC 4180 quoting).
fn csv_fields(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut field)),
            (c, _) => field.push(c),
        }
    }
    out.push(field);
    out
}

/// The parameters of the sweep whose results are `results` (the `params` of the sweep.json
/// `simrob batch` writes beside them), read within `max_bytes` (`--max-results-bytes`); none
/// when there is no such file. One that is there but cannot be read, or is not a sweep's
/// layout, is an error naming it: without its parameters a point could pool runs that differ.
fn sweep_params(results: &Path, max_bytes: u64) -> Result<Vec<String>> {
    let Some(dir) = results.parent() else {
        return Ok(Vec::new());
    };
    let path = dir.join("sweep.json");
    if !path.exists() {
        return Ok(Vec::new());
    }
    let text = crate::shell::read_text_within(
        &path,
        "the sweep's layout",
        max_bytes,
        crate::batch::RAISE_RESULTS,
    )?;
    let layout: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("the sweep's layout {} is not JSON", path.display()))?;
    let params = layout
        .get("params")
        .and_then(|p| p.as_array())
        .with_context(|| {
            format!(
                "the sweep's layout {} has no \"params\" list (simrob batch writes one)",
                path.display()
            )
        })?;
    Ok(params
        .iter()
        .filter_map(|p| p.as_str().map(String::from))
        .collect())
}

/// Mean, spread low and high of `values`.
fn summarize(values: &[f64], spread: Spread) -> (f64, f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    match spread {
        Spread::Std => {
            let var = if values.len() > 1 {
                values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)
            } else {
                0.0
            };
            (mean, mean - var.sqrt(), mean + var.sqrt())
        }
        Spread::Minmax => (
            mean,
            values.iter().copied().fold(f64::INFINITY, f64::min),
            values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        ),
    }
}

#[allow(clippy::too_many_arguments)]
fn batch_figure(
    path: &Path,
    max_bytes: u64,
    x: &str,
    y: &str,
    group: &[String],
    spread: Spread,
    x_label: Option<String>,
    y_label: Option<String>,
    title: Option<String>,
) -> Result<Figure> {
    let text = crate::shell::read_text_within(
        path,
        "the results",
        max_bytes,
        crate::batch::RAISE_RESULTS,
    )?;
    let mut lines = text.lines();
    let first = lines.next().unwrap_or_default();
    if first.trim().is_empty() {
        bail!(
            "{}: empty, no header line: a sweep's results.csv (simrob batch) is expected",
            path.display()
        );
    }
    if first.trim_start().starts_with('{') {
        bail!(
            "{}: JSON lines, not CSV: plot the sweep's results.csv (beside its results.jsonl)",
            path.display()
        );
    }
    let header = csv_fields(first);
    let col = |name: &str| {
        header.iter().position(|h| h == name).with_context(|| {
            format!(
                "{}: no column {name:?} (columns: {})",
                path.display(),
                header.join(", ")
            )
        })
    };
    let (xi, yi) = (col(x)?, col(y)?);
    let gi: Vec<usize> = group.iter().map(|g| col(g)).collect::<Result<_>>()?;
    let status = header.iter().position(|h| h == "status");
    // The sweep's other inputs (its parameters, from the sweep.json beside the results, and
    // its scenario): a point pooling runs where one of them varies would mix them.
    let params = sweep_params(path, max_bytes)?;
    let inputs: Vec<(usize, &str)> = params
        .iter()
        .map(String::as_str)
        .chain(["scenario"])
        .filter(|c| *c != x && !group.iter().any(|g| g == c))
        .filter_map(|c| {
            header
                .iter()
                .position(|h| h == c)
                .map(|i| (i, header[i].as_str()))
        })
        .collect();
    let mut seen: BTreeMap<(String, u64), Vec<String>> = BTreeMap::new();
    let mut groups: BTreeMap<String, BTreeMap<u64, (f64, Vec<f64>)>> = BTreeMap::new();
    let mut skipped = 0;
    // Failed runs left out, by point (the group, then x as written).
    let mut left_out: BTreeMap<String, usize> = BTreeMap::new();
    let field = |f: &[String], i: usize| f.get(i).cloned().unwrap_or_default();
    let key_of = |f: &[String]| {
        gi.iter()
            .zip(group)
            .map(|(&i, g)| format!("{g} {}", field(f, i)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    for (n, line) in lines.enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let f = csv_fields(line);
        if status.is_some_and(|s| f.get(s).map(String::as_str) != Some("ok")) {
            skipped += 1;
            let key = key_of(&f);
            let at = if key.is_empty() {
                format!("{x} = {}", field(&f, xi))
            } else {
                format!("{key}, {x} = {}", field(&f, xi))
            };
            *left_out.entry(at).or_default() += 1;
            continue;
        }
        let number = |i: usize, name: &str| -> Result<f64> {
            let v = f.get(i).map(String::as_str).unwrap_or("");
            v.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .with_context(|| {
                    format!(
                        "{} line {}: {name} is {v:?}, not a number",
                        path.display(),
                        n + 2
                    )
                })
        };
        let (xv, yv) = (number(xi, x)?, number(yi, y)?);
        let key = key_of(&f);
        let values: Vec<String> = inputs.iter().map(|&(i, _)| field(&f, i)).collect();
        let point = seen
            .entry((key.clone(), xv.to_bits()))
            .or_insert(values.clone());
        if let Some(k) = (0..values.len()).find(|&k| point[k] != values[k]) {
            let name = inputs[k].1;
            bail!(
                "{}: the point {x} = {xv}{} would pool runs of {name} {:?} and {:?}: add \
                 --group {name} (a line each), or plot the runs of one {name}",
                path.display(),
                if key.is_empty() {
                    String::new()
                } else {
                    format!(" ({key})")
                },
                point[k],
                values[k]
            );
        }
        let at = groups
            .entry(key)
            .or_default()
            .entry(xv.to_bits())
            .or_insert((xv, Vec::new()));
        at.1.push(yv);
    }
    if groups.is_empty() {
        bail!(
            "{}: no successful run to plot ({skipped} runs failed)",
            path.display()
        );
    }
    if skipped > 0 {
        let shown: Vec<String> = left_out
            .iter()
            .take(20)
            .map(|(at, n)| format!("{at}: {n}"))
            .collect();
        eprintln!(
            "note: {skipped} failed runs left out of the means ({}{})",
            shown.join("; "),
            if left_out.len() > 20 { "; …" } else { "" }
        );
    }
    let mut out = Vec::new();
    for (label, by_x) in groups {
        let mut rows: Vec<(f64, Vec<f64>)> = by_x.into_values().collect();
        rows.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut points = Vec::new();
        let mut bars = Vec::new();
        let (mut fewest, mut most) = (usize::MAX, 0);
        for (xv, ys) in rows {
            let (mean, lo, hi) = summarize(&ys, spread);
            points.push((xv, mean));
            // A single run has no spread: no bar (one of zero height reads as no variation).
            if ys.len() > 1 {
                bars.push((xv, lo, hi));
            }
            fewest = fewest.min(ys.len());
            most = most.max(ys.len());
        }
        let n = if fewest == most {
            format!("n = {most}")
        } else {
            format!("n = {fewest}–{most}")
        };
        let seeds = match (spread, most) {
            (_, 1) => "single runs, no spread".to_string(),
            (Spread::Std, _) => format!("mean ± sd, {n}"),
            (Spread::Minmax, _) => format!("mean, min–max, {n}"),
        };
        out.push(Line {
            label: if label.is_empty() {
                seeds
            } else {
                format!("{label} ({seeds})")
            },
            points,
            bars,
            marks: Marks::All,
        });
    }
    Ok(Figure {
        title,
        x_label: x_label.unwrap_or_else(|| x.to_string()),
        y_label: y_label.unwrap_or_else(|| y.to_string()),
        equal_aspect: false,
        shapes: Vec::new(),
        lines: out,
    })
}

/// Fonts looked for when `SIMROB_FONT` is not set.
const FONTS: [&str; 3] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
];

fn load_font() -> Result<()> {
    let explicit = std::env::var_os("SIMROB_FONT").map(PathBuf::from);
    let candidates: Vec<PathBuf> = match &explicit {
        Some(p) => vec![p.clone()],
        None => FONTS.iter().map(PathBuf::from).collect(),
    };
    let Some((path, bytes)) = candidates
        .iter()
        .find_map(|p| std::fs::read(p).ok().map(|b| (p, b)))
    else {
        match explicit {
            Some(p) => bail!("SIMROB_FONT={}: cannot read the font", p.display()),
            None => bail!(
                "no font for the plot's text: install DejaVu Sans (Debian: apt-get install fonts-dejavu-core) or set SIMROB_FONT=/path/to/font.ttf"
            ),
        }
    };
    // The font lives as long as the program: plotters keeps a reference to it.
    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
    register_font("sans-serif", FontStyle::Normal, bytes)
        .map_err(|_| anyhow::anyhow!("{}: not a TrueType/OpenType font", path.display()))
}

/// Draws the figure in memory and writes it through a temporary file and a rename
/// ([`simrob_files::write_atomically`]): a failure leaves no part of a figure, and an existing
/// file as it was.
fn draw_to(figure: &Figure, out: &Path, size: (u32, u32)) -> Result<()> {
    load_font()?;
    let ext = out
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let bytes = match ext.as_deref() {
        Some("svg") => {
            let mut text = String::new();
            {
                let root = SVGBackend::with_string(&mut text, size).into_drawing_area();
                draw(figure, &root, size)?;
                root.present().context("cannot draw the figure")?;
            }
            text.into_bytes()
        }
        Some("png") => {
            let mut buf = vec![0u8; size.0 as usize * size.1 as usize * 3];
            {
                let root = BitMapBackend::with_buffer(&mut buf, size).into_drawing_area();
                draw(figure, &root, size)?;
                root.present().context("cannot draw the figure")?;
            }
            let img = image::RgbImage::from_raw(size.0, size.1, buf)
                .context("the figure's pixels do not fill the image")?;
            let mut png = std::io::Cursor::new(Vec::new());
            img.write_to(&mut png, image::ImageFormat::Png)
                .context("cannot encode the figure as PNG")?;
            png.into_inner()
        }
        _ => bail!(
            "{}: the figure must be a .png or an .svg file",
            out.display()
        ),
    };
    simrob_files::write_atomically(out, &bytes)
        .with_context(|| format!("cannot write {}", out.display()))
}

/// Line colours: strong, distinct, readable in print.
const COLORS: [(u8, u8, u8); 8] = [
    (31, 119, 180),
    (214, 39, 40),
    (44, 160, 44),
    (255, 127, 14),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (23, 190, 207),
];

/// A tick label: at most four decimals, no trailing zeros (`50`, `0.25`, `-1.5`).
fn tick_label(v: f64) -> String {
    let text = format!("{v:.4}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" {
        "0".into()
    } else {
        text.to_string()
    }
}

/// The corner of the plot with the fewest points under the legend.
fn legend_corner(figure: &Figure, xr: (f64, f64), yr: (f64, f64)) -> SeriesLabelPosition {
    let corners = [
        (SeriesLabelPosition::UpperRight, true, true),
        (SeriesLabelPosition::UpperLeft, false, true),
        (SeriesLabelPosition::LowerRight, true, false),
        (SeriesLabelPosition::LowerLeft, false, false),
    ];
    let (w, h) = (xr.1 - xr.0, yr.1 - yr.0);
    let under = |right: bool, top: bool| {
        figure
            .lines
            .iter()
            .flat_map(|l| l.points.iter())
            .filter(|&&(x, y)| {
                let fx = (x - xr.0) / w;
                let fy = (y - yr.0) / h;
                (if right { fx > 0.55 } else { fx < 0.45 })
                    && (if top { fy > 0.7 } else { fy < 0.3 })
            })
            .count()
    };
    corners
        .into_iter()
        .min_by_key(|&(_, right, top)| under(right, top))
        .map_or(SeriesLabelPosition::UpperRight, |c| c.0)
}

/// The least and greatest finite x and y of a figure's points, bars and shapes.
fn raw_bounds(figure: &Figure) -> ((f64, f64), (f64, f64)) {
    let mut xs = (f64::INFINITY, f64::NEG_INFINITY);
    let mut ys = xs;
    let mut see = |x: f64, y: f64| {
        if x.is_finite() && y.is_finite() {
            xs = (xs.0.min(x), xs.1.max(x));
            ys = (ys.0.min(y), ys.1.max(y));
        }
    };
    for l in &figure.lines {
        for &(x, y) in &l.points {
            see(x, y);
        }
        for &(x, lo, hi) in &l.bars {
            see(x, lo);
            see(x, hi);
        }
    }
    for s in &figure.shapes {
        for &(x, y) in s {
            see(x, y);
        }
    }
    (xs, ys)
}

/// The axes' ranges: [`raw_bounds`] with a margin of 5 % each side.
fn bounds(figure: &Figure) -> ((f64, f64), (f64, f64)) {
    let (xs, ys) = raw_bounds(figure);
    let pad = |(a, b): (f64, f64)| {
        let span = if b > a { b - a } else { a.abs().max(1.0) };
        (a - 0.05 * span, b + 0.05 * span)
    };
    (pad(xs), pad(ys))
}

/// Refuses axes a figure cannot be drawn on: values so far apart that their span (or the
/// margin around it) overflows a 64-bit float (say ±1e308). The axis is named by its label
/// (a column, or a quantity).
fn check_ranges(figure: &Figure, xr: (f64, f64), yr: (f64, f64)) -> Result<()> {
    let (raw_x, raw_y) = raw_bounds(figure);
    for (axis, label, r, raw) in [
        ("x", &figure.x_label, xr, raw_x),
        ("y", &figure.y_label, yr, raw_y),
    ] {
        if !(r.0.is_finite() && r.1.is_finite() && (r.1 - r.0).is_finite() && r.1 > r.0) {
            bail!(
                "cannot draw the {axis} axis ({label}): its values go from {:e} to {:e}, \
                 too far apart for a 64-bit float to hold the span and its margin",
                raw.0,
                raw.1
            );
        }
    }
    Ok(())
}

fn draw<DB: DrawingBackend>(
    figure: &Figure,
    root: &DrawingArea<DB, Shift>,
    size: (u32, u32),
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let scale = f64::from(size.0.min(size.1 * 4 / 3)) / 1200.0;
    let px = |v: f64| (v * scale).round().max(1.0) as i32;
    root.fill(&WHITE).map_err(|e| anyhow::anyhow!("{e}"))?;
    let (mut xr, mut yr) = bounds(figure);
    let (left, bottom, top, right) = (
        px(130.0),
        px(100.0),
        px(if figure.title.is_some() { 70.0 } else { 30.0 }),
        px(40.0),
    );
    if figure.equal_aspect {
        let w = f64::from(size.0) - f64::from(left + right);
        let h = f64::from(size.1) - f64::from(bottom + top);
        let (sx, sy) = ((xr.1 - xr.0) / w, (yr.1 - yr.0) / h);
        if sx > sy {
            let extra = sx * h - (yr.1 - yr.0);
            yr = (yr.0 - extra / 2.0, yr.1 + extra / 2.0);
        } else {
            let extra = sy * w - (xr.1 - xr.0);
            xr = (xr.0 - extra / 2.0, xr.1 + extra / 2.0);
        }
    }
    check_ranges(figure, xr, yr)?;
    let mut builder = ChartBuilder::on(root);
    builder
        .margin_left(px(20.0))
        .margin_right(right)
        .margin_top(px(20.0))
        .x_label_area_size(bottom)
        .y_label_area_size(left);
    if let Some(t) = &figure.title {
        builder.caption(t, ("sans-serif", px(38.0)));
    }
    let mut chart = builder
        .build_cartesian_2d(xr.0..xr.1, yr.0..yr.1)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let tick = |v: &f64| tick_label(*v);
    chart
        .configure_mesh()
        .x_desc(figure.x_label.as_str())
        .y_desc(figure.y_label.as_str())
        .axis_desc_style(("sans-serif", px(32.0)))
        .label_style(("sans-serif", px(26.0)))
        .x_label_formatter(&tick)
        .y_label_formatter(&tick)
        .light_line_style(WHITE)
        .bold_line_style(RGBColor(215, 215, 215))
        .draw()
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    for s in &figure.shapes {
        let mut closed = s.clone();
        closed.extend(s.first().copied());
        chart
            .draw_series(std::iter::once(Polygon::new(
                s.clone(),
                RGBColor(228, 232, 228).filled(),
            )))
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        chart
            .draw_series(std::iter::once(PathElement::new(
                closed,
                RGBColor(150, 160, 150).stroke_width(px(2.0) as u32),
            )))
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    let width = px(4.0) as u32;
    for (k, line) in figure.lines.iter().enumerate() {
        let (r, g, b) = COLORS[k % COLORS.len()];
        let color = RGBColor(r, g, b).to_rgba();
        let style = color.stroke_width(width);
        chart
            .draw_series(LineSeries::new(line.points.iter().copied(), style))
            .map_err(|e| anyhow::anyhow!("{e}"))?
            .label(line.label.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 40, y)], color.stroke_width(width))
            });
        for &(x, lo, hi) in &line.bars {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x, lo), (x, hi)],
                    color.stroke_width(width.max(2) / 2 + 1),
                )))
                .map_err(|e| anyhow::anyhow!("{e}"))?;
        }
        let marks: Vec<(f64, f64)> = match line.marks {
            Marks::All => line.points.clone(),
            Marks::End => line.points.last().copied().into_iter().collect(),
        };
        chart
            .draw_series(
                marks
                    .into_iter()
                    .map(|p| Circle::new(p, px(8.0), color.filled())),
            )
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    chart
        .configure_series_labels()
        .label_font(("sans-serif", px(26.0)))
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(160, 160, 160))
        .legend_area_size(px(60.0))
        .position(legend_corner(figure, xr, yr))
        .draw()
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_follow_the_quoting_rules() {
        assert_eq!(
            csv_fields("a,\"b, \"\"c\"\"\",,d"),
            ["a", "b, \"c\"", "", "d"]
        );
    }

    #[test]
    fn spread_over_seeds() {
        let (m, lo, hi) = summarize(&[1.0, 2.0, 3.0], Spread::Std);
        assert_eq!((m, lo, hi), (2.0, 1.0, 3.0));
        assert_eq!(summarize(&[4.0, 1.0], Spread::Minmax), (2.5, 1.0, 4.0));
        assert_eq!(summarize(&[5.0], Spread::Std), (5.0, 5.0, 5.0));
    }

    #[test]
    fn long_lines_are_thinned_keeping_the_end() {
        let points: Vec<(f64, f64)> = (0..10_001).map(|i| (i as f64, 0.0)).collect();
        let t = thin(points);
        assert!(t.len() <= MAX_POINTS + 1);
        assert_eq!(t.first(), Some(&(0.0, 0.0)));
        assert_eq!(t.last(), Some(&(10_000.0, 0.0)));
    }

    #[test]
    fn tick_labels_are_short() {
        assert_eq!(tick_label(50.0), "50");
        assert_eq!(tick_label(0.25), "0.25");
        assert_eq!(tick_label(-0.00001), "0");
        assert_eq!(tick_label(1.0 / 3.0), "0.3333");
    }

    #[test]
    fn sizes_are_checked() {
        assert_eq!(parse_size("800x600").unwrap(), (800, 600));
        assert!(parse_size("10x10").is_err());
        assert!(parse_size("big").is_err());
    }

    /// A recording from `source` of entity 1 moving along x at 0.5 m/s for 1 s, then standing
    /// (a swarm body, whose recorded velocity is 0), a frame every 0.1 s.
    fn moving_robot(dir: &Path, source: &str) -> PathBuf {
        use simrob_viewer::{record::Writer, FrameEntity};
        let path = dir.join(format!("{}.simrec", source.len()));
        let mut w = Writer::new(std::fs::File::create(&path).unwrap(), source).unwrap();
        for i in 0..=20 {
            let t = i as f64 / 10.0;
            let x = 50.0 * t.min(1.0) + 100.0; // map units (cm)
            let b = simrob_viewer::record::swarm_box(1, 0, x, 40.0, 0.25 * t, [10.0, 10.0]);
            let frame = Frame {
                iteration: i,
                time: t,
                initialized: true,
                paused: false,
                sync: false,
                auto_adjust: false,
                timestep: 0.1,
                gravity: 0.0,
                steps_per_iteration: 1,
                real_time_factor: 0.0,
                entities: vec![FrameEntity {
                    id: 1,
                    kind: "Robot".into(),
                    p: Some(b.p),
                    r: Some(b.r),
                }],
                bodies: vec![b],
            };
            w.write_frame(&frame).unwrap();
        }
        w.finish().unwrap();
        path
    }

    #[test]
    fn velocities_of_a_swarm_recording_come_from_its_poses() {
        let dir = std::env::temp_dir().join(format!("simrob-plot-rates-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let specs = [
            "1.speed".to_string(),
            "1.vx".into(),
            "1.wz".into(),
            "1.x".into(),
        ];
        // A swarm run's recording keeps no velocities (they read 0): worked out from the poses.
        let swarm = series_points(&moving_robot(&dir, "simrob swarm: test"), &specs).unwrap();
        let (label, unit, speed) = &swarm[0];
        assert_eq!(
            (label.as_str(), *unit),
            ("entity 1 speed (from poses)", "m/s")
        );
        assert_eq!(speed.len(), 20);
        // (The compact format keeps poses as 32-bit floats.)
        let near = |a: f64, b: f64| (a - b).abs() < 1e-5;
        assert!(near(speed[0].0, 0.05) && near(speed[0].1, 0.5), "{speed:?}");
        assert!(speed[..10].iter().all(|p| near(p.1, 0.5)), "{speed:?}");
        assert!(speed[10..].iter().all(|p| near(p.1, 0.0)), "{speed:?}");
        assert!(swarm[1].2[..10].iter().all(|p| near(p.1, 0.5)), "vx");
        // The heading turns 0.25 rad/s (the map's y axis turned: -0.25 in the viewer's frame).
        assert!(
            swarm[2].2.iter().all(|p| near(p.1, -0.25)),
            "{:?}",
            swarm[2].2
        );
        assert_eq!(swarm[3].0, "entity 1 x");
        // Another recording's velocities are read as recorded.
        let other = series_points(&moving_robot(&dir, "simrob serve"), &specs).unwrap();
        assert_eq!(other[0].0, "entity 1 speed");
        assert!(other[0].2.iter().all(|p| p.1 == 0.0));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_rotated_box_footprint() {
        let f = footprint(
            [1.0, 0.0, 0.0],
            [0.0, 0.0, std::f64::consts::FRAC_PI_2],
            [2.0, 1.0, 1.0],
        );
        let near =
            |a: (f64, f64), b: (f64, f64)| (a.0 - b.0).abs() < 1e-12 && (a.1 - b.1).abs() < 1e-12;
        assert!(near(f[0], (1.5, -1.0)), "{f:?}");
    }
}
