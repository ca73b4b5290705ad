//! The benchmark report of cubeprim.
//!
//! - `merge --out benches/results/<card>.json RUN.json.. [--peers FILE]..`: bench_gpu's run
//!   files of one card (the newest run of each case wins) with the peers' outputs (PyTorch /
//!   CuPy `anchors.json`, the JSON lines of `sort_peers.py` and `recurrence_peers.py` (a line
//!   without `ms`, a skipped or failed peer, is left out), `cub_peers`' text table),
//!   each case given its fastest peer of the same operation and shape ([`PEERS`]).
//! - `render`: reads every `benches/results/*.json`, writes the summary table of each card
//!   between BENCHMARKS.md's `report` markers and the charts ([`CHARTS`]) beside the JSON.

use clap::{Parser, Subcommand};
use plotters::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Parser)]
#[command(
    about = "Merges bench_gpu runs with the peers' figures; writes BENCHMARKS.md's tables and charts"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Merges the runs of one card and the peers' outputs into one card file.
    Merge {
        /// bench_gpu's `--out` files.
        runs: Vec<PathBuf>,
        /// A peer program's output (repeatable).
        #[arg(long)]
        peers: Vec<PathBuf>,
        #[arg(long)]
        out: PathBuf,
    },
    /// Writes the tables into BENCHMARKS.md and the charts beside the card files.
    Render {
        #[arg(long, default_value = "benches/results")]
        results: PathBuf,
        #[arg(long, default_value = "BENCHMARKS.md")]
        markdown: PathBuf,
    },
}

/// A card file, or one bench_gpu run (which has no `peers`).
#[derive(Serialize, Deserialize)]
struct Run {
    card: String,
    driver: String,
    runtime: String,
    commit: String,
    date: String,
    cases: Vec<Case>,
    /// Every peer figure measured on the card (the charts draw them all).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    peers: Vec<PeerRow>,
}

#[derive(Clone, Serialize, Deserialize)]
struct Case {
    family: String,
    op: String,
    dtype: String,
    shape: Vec<usize>,
    ours_ms: f64,
    clock: String,
    host_ms: f64,
    bytes: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    floor_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    peer: Option<Peer>,
    ok: bool,
    #[serde(default)]
    check: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    extra: BTreeMap<String, f64>,
    /// Where the case's run differs from the card file's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    commit: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    date: Option<String>,
}

#[derive(Clone, Serialize, Deserialize)]
struct Peer {
    name: String,
    ms: f64,
}

#[derive(Clone, Serialize, Deserialize)]
struct PeerRow {
    name: String,
    shape: Vec<usize>,
    ms: f64,
}

/// Each case's peers: the programs' names for the same operation (the fastest of those
/// measured at the case's shape is the case's peer).
const PEERS: &[(&str, &[&str])] = &[
    (
        "copy f32 (r+w)",
        &["memcpy d2d f32 (r+w)", "copy f32 (d2d, r+w)"],
    ),
    (
        "copy u32 (r+w)",
        &["memcpy d2d f32 (r+w)", "copy f32 (d2d, r+w)"],
    ),
    ("cumsum f32 1-D (look-back)", SCAN_PEERS),
    ("cumsum f32 1-D (look-back, plain loads)", SCAN_PEERS),
    ("cumsum f32 1-D (reduce-then-scan)", SCAN_PEERS),
    (
        "cumsum f32 1-D exclusive reverse",
        &["cub ExclusiveSum f32"],
    ),
    ("cumsum i32 1-D", &["torch.cumsum i32 1-D"]),
    ("cumsum bf16 1-D", &["torch.cumsum bf16 1-D"]),
    ("cummax f32 1-D", &["cub InclusiveScan max f32"]),
    ("cumsum f32 rows", &["torch.cumsum f32 rows"]),
    ("cumprod f32 rows", &["torch.cumprod f32 rows"]),
    (
        "cummax f32 rows + indices",
        &["torch.cummax f32 rows (+idx)"],
    ),
    (
        "sort u32 keys",
        &["cub RadixSort SortKeys u32", "cupy.sort uint32 (CUB)"],
    ),
    (
        "sort i32 keys",
        &[
            "cupy.sort int32 (CUB)",
            "cupy.sort i32",
            "torch.sort int32 keys",
            "torch.sort i32 keys",
        ],
    ),
    (
        "argsort f32 stable (U32 indices)",
        &[
            "cub RadixSort SortPairs f32/u32",
            "torch.argsort f32 stable",
        ],
    ),
    (
        "argsort f32 stable (I64 indices)",
        &["torch.argsort f32 stable", "torch.sort f32 (+i64 idx)"],
    ),
    (
        "row sort f32 with i64 indices",
        &[
            "torch.sort rows f32 stable with indices",
            "torch.sort f32 rows (+idx)",
            "cub SegmentedSort SortPairs",
        ],
    ),
    ("top-k k=50 f32 (i64 indices, Select)", TOPK_PEERS),
    ("top-k k=50 f32 (i64 indices, Sort)", TOPK_PEERS),
    (
        "reduce sum f32",
        &["cub Reduce Sum f32", "sum f32 (read only)"],
    ),
    (
        "masked_select f32 50% (u8 mask)",
        &["cub Select Flagged f32 50%", "torch.masked_select f32 50%"],
    ),
    ("nonzero 50% (u8 flags)", &["torch.nonzero 50%"]),
    ("linear_recurrence f32 rows", RECURRENCE_PEERS),
    (
        "linear_recurrence f32 rows reverse",
        RECURRENCE_REVERSE_PEERS,
    ),
];
const SCAN_PEERS: &[&str] = &[
    "cub InclusiveSum f32",
    "torch.cumsum f32 1-D",
    "cupy.cumsum f32 1-D",
    "cupy.cumsum f32 1-D (CUB)",
];
const TOPK_PEERS: &[&str] = &["torch.topk k=50", "torch.topk k=50 rows"];
/// `benches/peers/recurrence_peers.py`'s names (the loop's time past 8192 steps extrapolated).
const RECURRENCE_PEERS: &[&str] = &[
    "torch loop over t f32",
    "torch loop over t f32 (8192 steps timed, extrapolated)",
    "torch Hillis-Steele f32",
    "accelerated_scan.ref f32 (torch tree)",
    "accelerated_scan.warp f32",
    "accelerated_scan.scalar f32 (triton)",
];
const RECURRENCE_REVERSE_PEERS: &[&str] = &[
    "torch loop over t f32 reverse",
    "torch Hillis-Steele f32 reverse",
    "accelerated_scan.ref f32 (torch tree) reverse",
    "accelerated_scan.warp f32 reverse",
];

/// A chart: time against size of one of our 1-D cases, its peers and the copy floor.
struct Chart {
    file: &'static str,
    title: &'static str,
    ours: &'static str,
    peers: &'static [&'static str],
}

const CHARTS: &[Chart] = &[
    Chart {
        file: "scan",
        title: "inclusive cumsum, f32, 1-D",
        ours: "cumsum f32 1-D (look-back)",
        peers: SCAN_PEERS,
    },
    Chart {
        file: "sort",
        title: "sort, 32-bit keys only, 1-D",
        ours: "sort u32 keys",
        peers: &[
            "cub RadixSort SortKeys u32",
            "cupy.sort uint32 (CUB)",
            "torch.sort i32 keys",
            "torch.sort int32 keys",
        ],
    },
    Chart {
        file: "select",
        title: "masked_select, f32, 50 % of a byte mask",
        ours: "masked_select f32 50% (u8 mask)",
        peers: &["cub Select Flagged f32 50%", "torch.masked_select f32 50%"],
    },
];

fn read_json<T: for<'de> Deserialize<'de>>(p: &Path) -> T {
    let s = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&s).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A shape as the peer programs print it: `268435456`, `(1024, 4096)` or `[16384,4096]`.
fn parse_shape(s: &str) -> Option<Vec<usize>> {
    let s = s.trim().trim_matches(|c| "()[]".contains(c));
    s.split(',')
        .filter(|t| !t.trim().is_empty())
        .map(|t| t.trim().parse().ok())
        .collect()
}

/// Every peer figure of one output file: a JSON array (`anchors.json`: `op`, `shape`, `ms`),
/// JSON lines (`peer`, `shape`, `ms`) or text rows (`NAME  SHAPE  MS ms ..`; a `[r,c]` in
/// CUB's names is the shape).
fn read_peers(p: &Path) -> Vec<PeerRow> {
    let s = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    if s.trim_start().starts_with('[') {
        let rows: Vec<serde_json::Value> = serde_json::from_str(&s).expect("anchors.json");
        return rows
            .iter()
            .filter_map(|r| {
                let shape = match &r["shape"] {
                    serde_json::Value::String(s) => parse_shape(s)?,
                    v => serde_json::from_value(v.clone()).ok()?,
                };
                Some(PeerRow {
                    name: r["op"].as_str()?.to_string(),
                    shape,
                    ms: r["ms"].as_f64()?,
                })
            })
            .collect();
    }
    let mut out = Vec::new();
    for line in s.lines() {
        if line.starts_with('{') {
            let Ok(r) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            if let (Some(name), Some(ms), Ok(shape)) = (
                r["peer"].as_str(),
                r["ms"].as_f64(),
                serde_json::from_value::<Vec<usize>>(r["shape"].clone()),
            ) {
                out.push(PeerRow {
                    name: name.into(),
                    shape,
                    ms,
                });
            }
            continue;
        }
        // NAME SHAPE MS "ms": the shape is the integer or parenthesised list before MS.
        let Some(at) = line.find(" ms ") else {
            continue;
        };
        let head = line[..at].trim_end();
        let Some((rest, ms)) = head.rsplit_once(char::is_whitespace) else {
            continue;
        };
        let Ok(ms) = ms.parse::<f64>() else { continue };
        let rest = rest.trim_end();
        let (name, shape) = if rest.ends_with(')') {
            let Some(open) = rest.rfind('(') else {
                continue;
            };
            (&rest[..open], parse_shape(&rest[open..]))
        } else {
            let Some((n, s)) = rest.rsplit_once(char::is_whitespace) else {
                continue;
            };
            (n, parse_shape(s))
        };
        let (mut name, Some(mut shape)) = (name.trim().to_string(), shape) else {
            continue;
        };
        if let (Some(o), Some(c)) = (name.find('['), name.find(']')) {
            if let Some(s) = parse_shape(&name[o..=c]) {
                shape = s;
                name = name[..o].trim().to_string();
            }
        }
        out.push(PeerRow { name, shape, ms });
    }
    out
}

fn merge(runs: &[PathBuf], peers: &[PathBuf], out: &Path) {
    let mut runs: Vec<Run> = runs.iter().map(|p| read_json(p)).collect();
    assert!(!runs.is_empty(), "no run given");
    // Oldest first, so a newer run's case replaces an older one (stable: same date keeps order).
    runs.sort_by(|a, b| a.date.cmp(&b.date));
    let newest = runs.last().unwrap();
    for r in &runs {
        assert_eq!(r.card, newest.card, "runs of different cards");
    }
    let mut card = Run {
        card: newest.card.clone(),
        driver: newest.driver.clone(),
        runtime: newest.runtime.clone(),
        commit: newest.commit.clone(),
        date: newest.date.clone(),
        cases: Vec::new(),
        peers: peers.iter().flat_map(|p| read_peers(p)).collect(),
    };
    let family_rank = |f: &str| {
        ["scan", "sort", "compact", "recurrence"]
            .iter()
            .position(|&x| x == f)
    };
    for r in &runs {
        for c in &r.cases {
            let mut c = c.clone();
            if r.commit != card.commit || r.date != card.date {
                c.commit = Some(r.commit.clone());
                c.date = Some(r.date.clone());
            }
            let same = |d: &Case| d.family == c.family && d.op == c.op && d.shape == c.shape;
            match card.cases.iter_mut().find(|d| same(d)) {
                Some(d) => *d = c,
                None => card.cases.push(c),
            }
        }
    }
    card.cases
        .sort_by_key(|c| (family_rank(&c.family), !c.op.starts_with("copy")));
    for c in &mut card.cases {
        let names = PEERS.iter().find(|(op, _)| *op == c.op).map(|p| p.1);
        c.peer = names.and_then(|names| {
            card.peers
                .iter()
                .filter(|p| p.shape == c.shape && names.contains(&p.name.as_str()))
                .min_by(|a, b| a.ms.total_cmp(&b.ms))
                .map(|p| Peer {
                    name: p.name.clone(),
                    ms: p.ms,
                })
        });
    }
    let json = serde_json::to_string_pretty(&card).unwrap() + "\n";
    std::fs::write(out, json).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
    println!(
        "wrote {} ({} cases, {} peer figures)",
        out.display(),
        card.cases.len(),
        card.peers.len()
    );
}

/// 1-D: `2^28` for powers of two from 2^10, else the number; rows as `R × C`.
fn fmt_shape(s: &[usize]) -> String {
    s.iter()
        .map(|&d| {
            if s.len() == 1 && d >= 1024 && d.is_power_of_two() {
                format!("2^{}", d.trailing_zeros())
            } else {
                d.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" × ")
}

fn fmt_ms(ms: f64) -> String {
    if ms >= 1.0 {
        format!("{ms:.3}")
    } else {
        format!("{ms:.4}")
    }
}

/// The summary table of one card.
fn table(card: &Run) -> String {
    let mut s = format!(
        "### {} ({}, driver {})\n\nNewest run {} at `{}`; a case measured in an older run names \
         its own commit and date. Times in ms: the device clock (d) where the runtime has it, \
         else the host clock (h). *% of copy*: the case's bytes at the device copy's bandwidth \
         of the same run, over its time.\n\n",
        card.card, card.runtime, card.driver, card.date, card.commit
    );
    s += "| op | shape | cubeprim (ms) | best peer | peer (ms) | cubeprim / peer | % of copy | measured |\n";
    s += "|---|---|---:|---|---:|---:|---:|---|\n";
    for c in &card.cases {
        let (peer, pms, ratio) = match &c.peer {
            Some(p) => (
                p.name.clone(),
                fmt_ms(p.ms),
                format!("{:.2}", c.ours_ms / p.ms),
            ),
            None => (String::new(), String::new(), String::new()),
        };
        let pct = c
            .floor_ms
            .map_or(String::new(), |f| format!("{:.0} %", 100.0 * f / c.ours_ms));
        let when = match (&c.commit, &c.date) {
            (Some(k), Some(d)) => format!("`{k}`, {d}"),
            _ => String::new(),
        };
        s += &format!(
            "| {}{} | {} | {} ({}) | {peer} | {pms} | {ratio} | {pct} | {when} |\n",
            c.op,
            if c.ok { "" } else { " **WRONG**" },
            fmt_shape(&c.shape),
            fmt_ms(c.ours_ms),
            &c.clock[..1],
        );
    }
    s
}

/// `NVIDIA H100 80GB HBM3` → `h100`: the card file's and charts' stem.
fn card_slug(card: &str) -> String {
    card.split_whitespace()
        .find(|w| w.chars().any(|c| c.is_ascii_digit()))
        .unwrap_or(card)
        .to_lowercase()
}

const COLORS: [RGBColor; 6] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
];

/// One chart of one card: log-log time against elements. `None` where the card has no case.
fn chart(card: &Run, ch: &Chart, dir: &Path) -> Option<PathBuf> {
    let n = |s: &[usize]| s.iter().product::<usize>() as f64;
    let mut ours: Vec<(f64, f64)> = card
        .cases
        .iter()
        .filter(|c| c.op == ch.ours && c.shape.len() == 1 && c.ok)
        .map(|c| (n(&c.shape), c.ours_ms))
        .collect();
    ours.sort_by(|a, b| a.0.total_cmp(&b.0));
    let floor = card
        .cases
        .iter()
        .find(|c| c.op == ch.ours && c.floor_ms.is_some())?;
    // The copy floor is linear in the size: the case's floor at its size, scaled.
    let per_elem = floor.floor_ms? / n(&floor.shape);
    let mut series: Vec<(String, Vec<(f64, f64)>)> = vec![("cubeprim".into(), ours)];
    for &name in ch.peers {
        let mut pts: Vec<(f64, f64)> = card
            .peers
            .iter()
            .filter(|p| p.name == name && p.shape.len() == 1)
            .map(|p| (n(&p.shape), p.ms))
            .collect();
        if !pts.is_empty() {
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            series.push((name.into(), pts));
        }
    }
    let all = series.iter().flat_map(|s| s.1.iter());
    let (x0, x1) = all
        .clone()
        .fold((f64::MAX, 0f64), |(a, b), p| (a.min(p.0), b.max(p.0)));
    let (y0, y1) = all.fold((f64::MAX, 0f64), |(a, b), p| (a.min(p.1), b.max(p.1)));
    let (x0, x1) = (x0 / 2.0, x1 * 2.0);
    let (y0, y1) = ((y0.min(per_elem * x0)) / 1.5, y1 * 1.5);
    let path = dir.join(format!("{}-{}.svg", card_slug(&card.card), ch.file));
    let target = path.clone();
    let root = SVGBackend::new(&target, (720, 440)).into_drawing_area();
    root.fill(&WHITE).ok()?;
    let mut c = ChartBuilder::on(&root)
        .caption(format!("{}: {}", card.card, ch.title), ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())
        .ok()?;
    c.configure_mesh()
        .x_desc("elements")
        .y_desc("ms per call")
        .x_label_formatter(&|x| format!("2^{:.0}", x.log2()))
        .y_label_formatter(&|y| format!("{y}"))
        .draw()
        .ok()?;
    let floor_pts = [(x0, per_elem * x0), (x1, per_elem * x1)];
    c.draw_series(LineSeries::new(floor_pts, BLACK.mix(0.5).stroke_width(1)))
        .ok()?
        .label("copy floor (same bytes at the device copy's bandwidth)")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], BLACK.mix(0.5)));
    for (i, (name, pts)) in series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let width = if i == 0 { 3 } else { 1 };
        c.draw_series(LineSeries::new(pts.clone(), color.stroke_width(width)))
            .ok()?
            .label(name.as_str())
            .legend(move |(x, y)| {
                PathElement::new([(x, y), (x + 16, y)], color.stroke_width(width))
            });
        c.draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))
            .ok()?;
    }
    c.configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .draw()
        .ok()?;
    root.present().ok()?;
    Some(path)
}

const BEGIN: &str = "<!-- report:begin (written by benches/report: do not edit) -->";
const END: &str = "<!-- report:end -->";

fn render(results: &Path, markdown: &Path) {
    let mut files: Vec<PathBuf> = std::fs::read_dir(results)
        .unwrap_or_else(|e| panic!("{}: {e}", results.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut md = String::new();
    for f in &files {
        let card: Run = read_json(f);
        if card.cases.is_empty() {
            continue;
        }
        md += &table(&card);
        md += "\n";
        for ch in CHARTS {
            if let Some(svg) = chart(&card, ch, results) {
                let rel = svg
                    .strip_prefix(markdown.parent().unwrap_or(Path::new("")))
                    .unwrap_or(&svg);
                md += &format!("![{}: {}]({})\n", card.card, ch.title, rel.display());
                println!("wrote {}", svg.display());
            }
        }
        md += "\n";
    }
    let doc =
        std::fs::read_to_string(markdown).unwrap_or_else(|e| panic!("{}: {e}", markdown.display()));
    let (Some(a), Some(b)) = (doc.find(BEGIN), doc.find(END)) else {
        panic!("{}: no `{BEGIN}` … `{END}` markers", markdown.display());
    };
    let doc = format!("{}{BEGIN}\n\n{md}{}", &doc[..a], &doc[b..]);
    std::fs::write(markdown, doc).unwrap();
    println!("wrote {}", markdown.display());
}

fn main() {
    match Cli::parse().cmd {
        Cmd::Merge { runs, peers, out } => merge(&runs, &peers, &out),
        Cmd::Render { results, markdown } => render(&results, &markdown),
    }
}
