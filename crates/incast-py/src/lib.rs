//! `incast._core`: the thin PyO3 glue between the engine and the Python package.
//!
//! One call per run (`run`): Python sends a scenario in the user's TOML shape
//! as JSON (the engine reads it, `settings`), the engine runs with the GIL
//! released, and the `RunResult` comes back as JSON, except its timeout rows
//! and traces, which grow with simulated time and cross as typed columns of
//! bytes (`incast_sim::stats::columns`), and the packet capture, one `bytes` pcap
//! file per host. `resolve_json` reads a scenario with dotted overrides and
//! gives back its canonical form, its plain-SI form and its hash;
//! `schema_json` lists every setting. Python restates none of them. Nothing
//! per packet or per timeout crosses into Python as objects. Users import `incast`, never this
//! module; `python/incast/_core.pyi` is its hand-written stub.
//!
//! The real-socket benchmark (`incast-bench`) crosses the same way: a read's
//! settings go in as JSON and its report comes back as JSON. Its loops run
//! with the GIL released and reattach briefly every 50 ms to run Python's
//! signal handlers, so Ctrl-C (and a SIGTERM handler that raises) stops them.
//!
//! Every function runs inside [`guarded`]: a panic (a bug) becomes one
//! `SimulationError` line naming where it happened, never PyO3's
//! `PanicException`, which derives from `BaseException` and so escapes
//! `except Exception`.

use incast_bench::{ReadConfig, RunningServer, Server, ServerConfig};
use incast_sim::{Scenario, SimError};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyKeyboardInterrupt, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use serde_json::Value as Json;
use std::net::SocketAddr;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Mutex;

create_exception!(incast._core, IncastError, PyException, "Base class of every error the incast engine raises.");
create_exception!(
    incast._core,
    ScenarioError,
    IncastError,
    "A scenario is malformed or a field is out of range; the message starts with the field's dotted path."
);
create_exception!(
    incast._core,
    SimulationError,
    IncastError,
    "The engine failed while running a valid scenario (a bug: please report it with the scenario)."
);

/// Map an engine error to its Python exception class.
fn to_py_err(err: SimError) -> PyErr {
    match err {
        SimError::InvalidScenario { field, message } => ScenarioError::new_err(format!("{field}: {message}")),
        SimError::TimeOverflow => ScenarioError::new_err(err.to_string()),
    }
}

/// The text of a panic payload, for the SimulationError message.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_owned()
    }
}

thread_local! {
    /// Inside a [`guarded`] call on this thread: its panics are reported as errors.
    static GUARDED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Where the last guarded panic on this thread happened.
    static PANIC_AT: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// Keep quiet about a panic inside a [`guarded`] call (its error says it all,
/// in one line) and note where it happened; any other thread's panic (a
/// benchmark server's) is printed as before.
fn install_panic_hook() {
    let previous = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        if GUARDED.with(std::cell::Cell::get) {
            let at = info.location().map(|l| format!("{}:{}", l.file(), l.line())).unwrap_or_default();
            PANIC_AT.with(|p| *p.borrow_mut() = at);
        } else {
            previous(info);
        }
    }));
}

/// Run `f`; a panic in it becomes a one-line `SimulationError`.
fn guarded<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    let outer = GUARDED.with(|g| g.replace(true));
    let outcome = panic::catch_unwind(AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(outer));
    outcome.unwrap_or_else(|payload| {
        let at = PANIC_AT.with(|p| std::mem::take(&mut *p.borrow_mut()));
        let message = panic_message(&*payload).replace('\n', " ");
        Err(SimulationError::new_err(format!(
            "internal error: {message} (at {at}); a bug in incast: please report it with the scenario"
        )))
    })
}

/// JSON from Python, which `json.dumps` wrote: anything else is a caller's bug.
fn parse_json(json: &str) -> PyResult<Json> {
    serde_json::from_str(json).map_err(|e| ScenarioError::new_err(format!("scenario: not JSON: {e}")))
}

/// Read a scenario in the user's shape; settings left out take their
/// defaults, unknown ones are refused naming them.
fn parse_scenario(json: &str) -> PyResult<Scenario> {
    Scenario::from_json(&parse_json(json)?).map_err(to_py_err)
}

/// Apply `overrides_json` (a JSON list of `[dotted path, value]` pairs, in
/// order) to a scenario in the user's shape (`scenario_json`, a JSON object)
/// and return the result, still in the user's shape: nothing is resolved.
///
/// Raises `ScenarioError` naming an unknown path.
#[pyfunction]
fn apply_overrides_json(scenario_json: &str, overrides_json: &str) -> PyResult<String> {
    guarded(|| {
        let raw = parse_json(scenario_json)?;
        let Json::Object(mut raw) = raw else {
            let got = incast_sim::settings::python_repr(&raw);
            return Err(ScenarioError::new_err(format!("scenario: must be a table of settings, got {got}")));
        };
        let Json::Array(overrides) = parse_json(overrides_json)? else {
            return Err(ScenarioError::new_err("overrides: must be a list of [path, value] pairs"));
        };
        for pair in overrides {
            let Some([Json::String(path), value]) = pair.as_array().map(Vec::as_slice) else {
                return Err(ScenarioError::new_err(format!("overrides: {pair} is not a [path, value] pair")));
            };
            Scenario::apply_override(&mut raw, path, value.clone()).map_err(to_py_err)?;
        }
        Ok(Json::Object(raw).to_string())
    })
}

/// Read a scenario in the user's shape (`scenario_json`) and return
/// `{"toml": ..., "si": ..., "hash": ..., "host_rtt_s": ...}`: the canonical
/// form in human units, the same settings in plain SI numbers, its hash, and
/// the seconds of `link.rtt` the hosts' stacks and NICs take (both ends, both
/// directions: what the links' propagation leaves, `LinkConfig::host_delay`).
///
/// Raises `ScenarioError` naming the dotted setting.
#[pyfunction]
fn resolve_json(scenario_json: &str) -> PyResult<String> {
    guarded(|| {
        let scenario = parse_scenario(scenario_json)?;
        let written = scenario.written();
        let host_rtt_s = 2.0 * scenario.link.host_delay().as_secs_f64();
        Ok(serde_json::json!({"toml": written.toml, "si": written.si, "hash": scenario.hash(), "host_rtt_s": host_rtt_s})
            .to_string())
    })
}

/// The name of every single-number figure of a run's summary, as a JSON list
/// (`Summary::figure_names`: composite figures' parts as `figure.part`).
#[pyfunction]
fn summary_figures_json() -> String {
    serde_json::to_string(&incast_sim::stats::Summary::figure_names()).expect("a list of names serializes")
}

/// Every setting of a scenario as a JSON list of `{name, kind, default,
/// allowed, none, doc}`, in order: what the command line and docs are built from.
#[pyfunction]
fn schema_json() -> PyResult<String> {
    guarded(|| {
        let entries: Vec<Json> = Scenario::schema()
            .into_iter()
            .map(|e| {
                let s = e.setting;
                serde_json::json!({"name": e.name, "kind": s.kind, "default": s.default, "allowed": s.allowed,
                    "none": s.none, "doc": s.doc})
            })
            .collect();
        Ok(Json::Array(entries).to_string())
    })
}

/// One column as it crosses: name, numpy dtype, labels of a coded column,
/// little-endian values.
type ColumnOut = (&'static str, &'static str, Vec<String>, Py<PyBytes>);
/// What `run` returns: the result's JSON, the timeout columns, each trace
/// that was on by name with its columns, and the pcap files.
type RunOut = (String, Vec<ColumnOut>, Vec<(&'static str, Vec<ColumnOut>)>, Vec<Py<PyBytes>>);

/// The columns as Python `bytes`.
fn columns_out(py: Python<'_>, columns: Vec<incast_sim::stats::columns::Column>) -> Vec<ColumnOut> {
    columns.into_iter().map(|c| (c.name, c.dtype, c.labels, PyBytes::new(py, &c.data).unbind())).collect()
}

/// Run one scenario given in the user's shape as JSON. Returns the
/// `RunResult` as JSON with its timeout rows and traces left out, those rows
/// as typed columns (`incast_sim::stats::columns`), each trace that was on as
/// `(name, columns)` (then, with `[traffic]` on, the `fct` and `queries` rows, `incast_sim::stats::fct`), and one pcap file per host (the client's first, then
/// server 0's, 1's, ...; empty when `trace.pcap` is off).
///
/// Settings left out take their defaults. Raises `ScenarioError` for JSON
/// that is not a valid scenario and `SimulationError` if the engine fails (a
/// panic included). The GIL is released for the simulation and the
/// encoding, so runs in several threads proceed in parallel.
#[pyfunction]
fn run(py: Python<'_>, scenario_json: &str) -> PyResult<RunOut> {
    guarded(|| {
        use incast_sim::stats::columns;
        let scenario = parse_scenario(scenario_json)?;
        let outcome = py.detach(|| {
            incast_sim::run(&scenario).map(|mut r| {
                let files = r.capture.take().map(|c| c.host_files()).unwrap_or_default();
                let timeouts = columns::timeouts(&std::mem::take(&mut r.timeouts));
                let mut traces = columns::traces(std::mem::take(&mut r.traces));
                // The open-loop traffic's rows cross beside the traces, as tables named `fct` and `queries`.
                if r.summary.traffic.is_some() {
                    use incast_sim::stats::fct;
                    traces.push(("fct", fct::flow_columns(&std::mem::take(&mut r.open_flows), &r.flow_paths)));
                    traces.push(("queries", fct::query_columns(&std::mem::take(&mut r.queries))));
                }
                (serde_json::to_string(&r), timeouts, traces, files)
            })
        });
        let (json, timeouts, traces, files) = outcome.map_err(to_py_err)?;
        let json = json.map_err(|e| SimulationError::new_err(format!("cannot serialize the run result: {e}")))?;
        let traces = traces.into_iter().map(|(name, cols)| (name, columns_out(py, cols))).collect();
        let files = files.iter().map(|f| PyBytes::new(py, f).unbind()).collect();
        Ok((json, columns_out(py, timeouts), traces, files))
    })
}

/// A pcap file from `run` with every timestamp moved `by_ns`
/// nanoseconds later (`incast_sim::stats::pcap::shift`). Raises `ValueError`
/// if a timestamp would pass 2106-02-07 or `file` is not such a capture.
#[pyfunction]
fn pcap_shift(py: Python<'_>, file: &[u8], by_ns: u64) -> PyResult<Py<PyBytes>> {
    guarded(|| {
        let shifted = py.detach(|| incast_sim::stats::pcap::shift(file, by_ns));
        shifted
            .map(|f| PyBytes::new(py, &f).unbind())
            .ok_or_else(|| PyValueError::new_err("pcap: not an engine capture, or a timestamp past 2106-02-07"))
    })
}

/// Panic with `message`, inside the guard every function runs in: the test
/// suite's way to check that a panic crosses as one `SimulationError` line.
#[pyfunction]
fn panic_for_test(message: &str) -> PyResult<()> {
    guarded(|| panic!("{message}"))
}

/// Version of the engine this module was built from.
#[pyfunction]
fn engine_version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// The data file of a published flow-size distribution (`traffic.sizes`), as the engine ships it.
#[pyfunction]
fn flow_sizes_cdf(name: &str) -> PyResult<&'static str> {
    incast_sim::workload::flow_sizes::PUBLISHED.iter().find(|(n, ..)| *n == name).map(|&(.., text)| text).ok_or_else(
        || pyo3::exceptions::PyValueError::new_err(format!("traffic.sizes: {name:?} is not a published distribution")),
    )
}

/// The engine this module was built from: its version and a digest of its source
/// (`build.rs`), which changes with any change to the engine between versions.
#[pyfunction]
fn engine_build() -> &'static str {
    concat!(env!("CARGO_PKG_VERSION"), "+", env!("INCAST_ENGINE_SOURCE"))
}

/// A stop test for the benchmark loops: runs Python's signal handlers and
/// keeps the first exception one raised (KeyboardInterrupt on Ctrl-C).
fn signal_check(raised: &mut Option<PyErr>) -> impl FnMut() -> bool + '_ {
    move || {
        if raised.is_none() {
            *raised = Python::attach(|py| py.check_signals().err());
        }
        raised.is_some()
    }
}

/// A KeyboardInterrupt ends a benchmark loop normally; any other exception a
/// signal handler raised goes on to the caller.
fn reraise_unless_interrupt(py: Python<'_>, raised: Option<PyErr>) -> PyResult<()> {
    match raised {
        Some(e) if !e.is_instance_of::<PyKeyboardInterrupt>(py) => Err(e),
        _ => Ok(()),
    }
}

/// `host:port` to bind a benchmark server to, and its settings as JSON.
fn parse_server(bind: &str, config_json: &str) -> PyResult<(SocketAddr, ServerConfig)> {
    let addr = bind.parse().map_err(|_| {
        ScenarioError::new_err(format!("bind: {bind:?} is not an IP address and port like 0.0.0.0:7470"))
    })?;
    let config: ServerConfig =
        serde_json::from_str(config_json).map_err(|e| ScenarioError::new_err(format!("server: {e}")))?;
    config.validate().map_err(|e| ScenarioError::new_err(e.to_string()))?;
    Ok((addr, config))
}

/// Bind a benchmark server; an OSError (e.g. address in use) names the address.
fn bind_server(addr: SocketAddr, config: ServerConfig) -> PyResult<Server> {
    Server::bind(addr, config).map_err(|e| PyOSError::new_err(format!("cannot listen on {addr}: {e}")))
}

/// Read synchronized blocks from real servers (`incast-bench`); the settings
/// and the report are JSON.
///
/// Raises `ScenarioError` for settings that are invalid (the message starts
/// with the field). Every other outcome is a report: its `status` is
/// `complete`, `failed` (with `error`) or `interrupted` (Ctrl-C). The GIL is
/// released while reading; an exception other than KeyboardInterrupt raised
/// by a signal handler ends the read and propagates.
#[pyfunction]
fn bench_read_json(py: Python<'_>, config_json: &str) -> PyResult<String> {
    guarded(|| {
        let config: ReadConfig =
            serde_json::from_str(config_json).map_err(|e| ScenarioError::new_err(format!("read: {e}")))?;
        let mut raised = None;
        let report = py.detach(|| incast_bench::read(&config, &mut signal_check(&mut raised)));
        let report = report.map_err(|e| ScenarioError::new_err(e.to_string()))?;
        reraise_unless_interrupt(py, raised)?;
        serde_json::to_string(&report)
            .map_err(|e| SimulationError::new_err(format!("cannot serialize the report: {e}")))
    })
}

/// Serve the benchmark protocol on `bind` (`host:port`) until a signal
/// handler raises (KeyboardInterrupt on Ctrl-C); then close every connection
/// and return. `config_json` holds `max_response`, `max_connections`,
/// `idle_timeout` (seconds) and `socket`.
///
/// Raises `ScenarioError` for bad settings and `OSError` when the address
/// cannot be bound. Log lines go to standard error. The GIL is released
/// while serving.
#[pyfunction]
fn bench_serve(py: Python<'_>, bind: &str, config_json: &str) -> PyResult<()> {
    guarded(|| {
        let (addr, config) = parse_server(bind, config_json)?;
        let server = bind_server(addr, config)?;
        let mut raised = None;
        let served = py.detach(|| server.run(&mut signal_check(&mut raised)));
        served.map_err(|e| PyOSError::new_err(format!("serving on {addr}: {e}")))?;
        reraise_unless_interrupt(py, raised)
    })
}

/// A benchmark server running on a background thread (`bench_start_server`).
#[pyclass(module = "incast._core")]
struct BenchServer {
    address: String,
    running: Mutex<Option<RunningServer>>,
}

#[pymethods]
impl BenchServer {
    /// The `host:port` the server listens on.
    #[getter]
    fn address(&self) -> &str {
        &self.address
    }

    /// Stop serving and close every connection; stopping twice does nothing.
    fn stop(&self, py: Python<'_>) -> PyResult<()> {
        guarded(|| self.stop_now(py))
    }
}

impl BenchServer {
    fn stop_now(&self, py: Python<'_>) -> PyResult<()> {
        let running = self.running.lock().map_err(|_| SimulationError::new_err("server lock poisoned"))?.take();
        if let Some(server) = running {
            py.detach(|| server.stop()).map_err(|e| PyOSError::new_err(format!("{}: {e}", self.address)))?;
        }
        Ok(())
    }
}

/// Start a benchmark server on `bind` (`host:port`, port 0 picks a free one)
/// on a background thread; errors as for `bench_serve`.
#[pyfunction]
fn bench_start_server(bind: &str, config_json: &str) -> PyResult<BenchServer> {
    guarded(|| {
        let (addr, config) = parse_server(bind, config_json)?;
        let server = bind_server(addr, config)?;
        let address = server.local_addr().to_string();
        let running = server.spawn().map_err(|e| PyOSError::new_err(format!("cannot start the server thread: {e}")))?;
        Ok(BenchServer { address, running: Mutex::new(Some(running)) })
    })
}

/// Native core of the `incast` package (private; import `incast` instead).
#[pymodule]
mod _core {
    #[pymodule_export]
    use super::{
        apply_overrides_json, bench_read_json, bench_serve, bench_start_server, engine_build, engine_version,
        flow_sizes_cdf, panic_for_test, pcap_shift, resolve_json, run, schema_json, summary_figures_json, BenchServer,
        IncastError, ScenarioError, SimulationError,
    };

    #[pymodule_init]
    fn init(_m: &pyo3::Bound<'_, pyo3::types::PyModule>) -> pyo3::PyResult<()> {
        super::install_panic_hook();
        Ok(())
    }
}
