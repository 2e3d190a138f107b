//! `lws-sim serve`: the simulated cluster behind the Kubernetes API, for kubectl and kube-rs.
//!
//! A network front on a deterministic core. The core (`core.rs`) is one thread that owns the
//! world, loaded from a scenario (manifests applied, steps run as `run` does); it moves virtual
//! time at `--speed` times real time (`clock.rs`, the only wall clock) or stays paused, and serves
//! requests between steps. The front (`http.rs`, tokio) parses HTTP, hands each request over a
//! bounded channel and awaits the reply; watches are bounded channels the core fills with
//! `try_send` (`watch.rs`). With `serve/clock.rs` and `serve/http.rs`, this file is the only
//! place besides `main.rs` with threads, the wall clock and sockets; `record.rs` writes the
//! `--record` file.

mod clock;
mod columns;
pub mod core;
mod crds;
mod endpoints;
mod event_watch;
mod events;
mod http;
mod namespaces;
mod negotiate;
pub mod ops;
mod pod_row;
mod proto;
pub mod query;
mod record;
pub mod resources;
mod reviews;
mod strategic;
pub mod stream;
pub mod table;
pub mod watch;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::mpsc;

use crate::controller::ControllerConfig;
use crate::scenario::{Runner, Scenario, Step};
use crate::world::World;

/// `lws-sim serve`'s usage line (clap's `Usage:`).
pub const USAGE: &str = "\
lws-sim serve SCENARIO [--reconciler SPEC] [--seed N] [--addr 127.0.0.1:PORT]
               [--speed X | --paused] [--record FILE] [--request-timeout D]
               [--insecure-bind]";

/// The fastest virtual clock `--speed` and `/lws-sim/resume?speed=` accept: a simulated year
/// in about 30 real seconds.
pub const MAX_SPEED: f64 = 1_000_000.0;

/// What `lws-sim serve --help` prints after the flags: the control routes and exit codes.
pub const ROUTES: &str = "\
Control routes: POST /lws-sim/step?for=30s, /lws-sim/until?t=20m, /lws-sim/pause,
/lws-sim/resume?speed=X, /lws-sim/shutdown; GET /lws-sim/status.
Exit 0 after /lws-sim/shutdown, 1 if an invariant broke during the session; 2 on bad input.";

/// `lws-sim serve`'s command line, parsed by clap as every other command's is (so
/// `--addr=IP:PORT`, a misspelt flag's suggestion and shell completions work alike).
#[derive(clap::Args, Clone, Debug)]
pub struct Args {
    /// The scenario to load, as `run` does (manifests applied, steps run)
    #[arg(value_name = "SCENARIO")]
    pub scenario: PathBuf,
    /// Reconciler SPEC (default: the scenario's controller.reconciler)
    #[arg(long, value_name = "SPEC")]
    pub reconciler: Option<String>,
    /// Seed (default: the scenario's, else 1)
    #[arg(long, allow_negative_numbers = true, value_name = "N")]
    pub seed: Option<u64>,
    /// Where to listen; port 0 picks a free one, named on the first line of stdout
    #[arg(long, value_name = "IP:PORT", default_value = "127.0.0.1:8001")]
    pub addr: SocketAddr,
    /// Virtual seconds per real second, above 0 and at most 1000000
    #[arg(long, allow_negative_numbers = true, value_name = "X", default_value = "60", value_parser = parse_speed, conflicts_with = "paused")]
    pub speed: f64,
    /// Virtual time stands still until POST /lws-sim/step, /until or /resume
    #[arg(long)]
    pub paused: bool,
    /// Write the session as a scenario `lws-sim run FILE` replays: each client write as a
    /// step at its virtual instant
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// How long a client may take to send a request's body, in real time, 1s to 1h
    /// (kube-apiserver's flag); its headers get 32s
    #[arg(long, value_name = "D", default_value = "1m", value_parser = parse_request_timeout)]
    pub request_timeout: std::time::Duration,
    /// Allow a non-loopback --addr (there is no authentication)
    #[arg(long)]
    pub insecure_bind: bool,
}

fn parse_speed(v: &str) -> Result<f64, String> {
    let s: f64 = v.parse().map_err(|_| "not a number".to_string())?;
    if s > 0.0 && s <= MAX_SPEED {
        Ok(s)
    } else {
        Err(format!("must be above 0 and at most {MAX_SPEED}"))
    }
}

fn parse_request_timeout(v: &str) -> Result<std::time::Duration, String> {
    let d = humantime::parse_duration(v).map_err(|e| format!("{e} (e.g. 30s, 2m)"))?;
    if d < http::REQUEST_TIMEOUT_MIN || d > http::REQUEST_TIMEOUT_MAX {
        return Err(format!(
            "must be from {} to {}",
            humantime::format_duration(http::REQUEST_TIMEOUT_MIN),
            humantime::format_duration(http::REQUEST_TIMEOUT_MAX)
        ));
    }
    Ok(d)
}

impl Args {
    /// Virtual seconds per real second; `None` when paused.
    pub fn speed(&self) -> Option<f64> {
        (!self.paused).then_some(self.speed)
    }

    /// A non-loopback `--addr` needs `--insecure-bind`.
    fn check_addr(&self) -> Result<(), String> {
        if self.addr.ip().is_loopback() || self.insecure_bind {
            return Ok(());
        }
        Err(format!(
            "--addr {}: not a loopback address; the server has no authentication, pass --insecure-bind to allow it",
            self.addr
        ))
    }
}

/// Build the world as `scenario::run` does, and run the scenario's manifests and steps.
fn load(o: &Args) -> Result<(Runner, String, u64, u32), String> {
    let s = Scenario::load(&o.scenario).map_err(|e| e.to_string())?;
    if let Some(out) = &o.record {
        crate::scenario::check_output("--record", out)?;
        if let Some(input) = s.reads(out) {
            return Err(format!(
                "--record {}: the session reads this file ({}); writing it would destroy it",
                out.display(),
                input.display()
            ));
        }
    }
    let profile = s.reconciler(o.reconciler.as_deref())?;
    let seed = o.seed.or(s.spec.seed).unwrap_or(1);
    let cluster = s.cluster_config()?;
    let minor = cluster.kubernetes_minor;
    let mut world = World::new(seed, cluster);
    let mut cc = ControllerConfig::new(profile.clone());
    let c = &s.spec.controller;
    if let Some(p) = c.sync_period {
        cc.sync_period_ms = p.0;
    }
    let range =
        |r: Option<crate::scenario::spec::Range>, d: (u64, u64)| r.map(|r| (r.0, r.1)).unwrap_or(d);
    cc.api_latency_ms = range(c.api_latency, cc.api_latency_ms);
    cc.watch_lag_ms = range(c.watch_lag, cc.watch_lag_ms);
    cc.restart_delay_ms = range(c.restart_delay, cc.restart_delay_ms);
    cc.track_previous = s.steps.iter().any(|st| matches!(st, Step::StaleRead(_)));
    world.install_controller(cc);
    crate::scenario::limits::install_limits(&mut world.api);
    let mut runner = Runner::new(&s, &profile, world);
    runner.advance_to(0).map_err(|e| e.message())?;
    for (i, (file, objects)) in s.manifests.iter().enumerate() {
        for m in objects.iter() {
            runner
                .apply_manifest(file, m)
                .map_err(|h| s.at_manifest(i, h).message())?;
        }
    }
    for step in &s.steps {
        runner.run_step(step).map_err(|e| e.message())?;
    }
    Ok((runner, profile.name, seed, minor))
}

/// What the core reports once the scenario is loaded.
pub struct Ready {
    pub now_ms: u64,
    pub reconciler: String,
}

/// Load the scenario on the core thread, then serve on `listener` until shut down. True when
/// an invariant broke during the session.
pub fn serve(
    o: Args,
    listener: std::net::TcpListener,
    on_ready: impl FnOnce(SocketAddr, &Ready),
) -> Result<bool, String> {
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let (tx, rx) = mpsc::sync_channel::<core::Msg>(1024);
    let (ready_tx, ready_rx) = mpsc::channel::<Result<Ready, String>>();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let core_opts = o.clone();
    // The world is not `Send` (admission hooks are plain closures): it is built on its thread.
    let core_thread = std::thread::spawn(move || {
        let started = load(&core_opts).and_then(|(runner, reconciler, seed, minor)| {
            let now = runner.world.now_ms;
            let recorder = match &core_opts.record {
                Some(file) => {
                    let text = std::fs::read_to_string(&core_opts.scenario)
                        .map_err(|e| format!("{}: {e}", core_opts.scenario.display()))?;
                    Some(record::Recorder::new(
                        file,
                        &core_opts.scenario,
                        &text,
                        &reconciler,
                        seed,
                        now,
                    )?)
                }
                None => None,
            };
            let c = core::Core::new(
                runner,
                clock::Clock::new(core_opts.speed(), now),
                recorder,
                minor,
                addr.to_string(),
            );
            Ok((
                c,
                Ready {
                    now_ms: now,
                    reconciler,
                },
            ))
        });
        let broke = match started {
            Ok((c, ready)) => {
                let _ = ready_tx.send(Ok(ready));
                c.run(rx)
            }
            Err(e) => {
                let _ = ready_tx.send(Err(e));
                false
            }
        };
        let _ = stop_tx.send(());
        broke
    });
    let ready = ready_rx
        .recv()
        .map_err(|_| "the simulation core died while loading".to_string())??;
    on_ready(addr, &ready);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let r = rt.block_on(http::serve(listener, tx, stop_rx, o.request_timeout));
    let broke = core_thread.join().unwrap_or(false);
    r.map(|()| broke)
}

/// `lws-sim serve ...`: after a shutdown request exit 0, or 1 when an invariant broke during
/// the session; 2 on bad input.
pub fn cli(o: Args) -> ExitCode {
    if let Err(e) = o.check_addr() {
        eprintln!("error: {e}\n\nUsage: {USAGE}");
        return ExitCode::from(2);
    }
    let listener = match std::net::TcpListener::bind(o.addr) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("error: --addr {}: {e}", o.addr);
            return ExitCode::from(2);
        }
    };
    let r = serve(o, listener, |addr, ready| {
        use std::io::Write as _;
        println!(
            "lws-sim serve: listening on http://{addr} (t={}, reconciler {}); try: kubectl --server http://{addr} get lws,sts,pods",
            crate::time::fmt_ms(ready.now_ms),
            ready.reconciler
        );
        let _ = std::io::stdout().flush();
    });
    match r {
        Ok(broke) => ExitCode::from(u8::from(broke)),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
