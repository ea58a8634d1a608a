//! `incast._core`: the thin PyO3 glue between the engine and the Python package.
//!
//! One call per run, with JSON across the boundary: Python sends a `Scenario`
//! as JSON, the engine runs with the GIL released, and the `RunResult` comes
//! back as JSON. Nothing per packet ever crosses into Python as objects: a
//! packet capture (`run_json_capture`) comes back as one `bytes` pcap file
//! per host, encoded by the engine. Users import `incast`, never this
//! module; `python/incast/_core.pyi` is its hand-written stub.

use incast_sim::{Scenario, SimError};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::panic::{self, AssertUnwindSafe};

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

/// Parse engine JSON; fields left out take the engine's defaults (the
/// engine's config structs are `#[serde(default)]`), unknown fields are rejected.
fn parse_scenario(json: &str) -> PyResult<Scenario> {
    serde_json::from_str(json).map_err(|e| ScenarioError::new_err(format!("scenario: {e}")))
}

/// Run one scenario given as engine JSON; returns the `RunResult` as JSON.
///
/// Fields left out take the engine's defaults. Raises `ScenarioError` for JSON
/// that is not a valid scenario and `SimulationError` if the engine fails (a
/// panic included). The GIL is released for the whole simulation, so runs in
/// several threads proceed in parallel.
#[pyfunction]
fn run_json(py: Python<'_>, scenario_json: &str) -> PyResult<String> {
    let scenario = parse_scenario(scenario_json)?;
    let outcome = py.detach(|| {
        panic::catch_unwind(AssertUnwindSafe(|| incast_sim::run(&scenario))).map_err(|p| panic_message(&*p))
    });
    match outcome {
        Ok(Ok(result)) => serde_json::to_string(&result)
            .map_err(|e| SimulationError::new_err(format!("cannot serialize the run result: {e}"))),
        Ok(Err(err)) => Err(to_py_err(err)),
        Err(msg) => Err(SimulationError::new_err(format!("engine panicked: {msg}"))),
    }
}

/// Run one scenario given as engine JSON; returns the `RunResult` as JSON and
/// one pcap file per host (the client's first, then server 0's, 1's, ...),
/// empty when `trace.pcap` is off.
///
/// Errors as for `run_json`. The files are encoded with the GIL released and
/// cross as `bytes`, never as JSON.
#[pyfunction]
fn run_json_capture(py: Python<'_>, scenario_json: &str) -> PyResult<(String, Vec<Py<PyBytes>>)> {
    let scenario = parse_scenario(scenario_json)?;
    let outcome = py.detach(|| {
        panic::catch_unwind(AssertUnwindSafe(|| {
            incast_sim::run(&scenario).map(|mut r| {
                let files = r.capture.take().map(|c| c.host_files()).unwrap_or_default();
                (r, files)
            })
        }))
        .map_err(|p| panic_message(&*p))
    });
    match outcome {
        Ok(Ok((result, files))) => {
            let json = serde_json::to_string(&result)
                .map_err(|e| SimulationError::new_err(format!("cannot serialize the run result: {e}")))?;
            Ok((json, files.iter().map(|f| PyBytes::new(py, f).unbind()).collect()))
        }
        Ok(Err(err)) => Err(to_py_err(err)),
        Err(msg) => Err(SimulationError::new_err(format!("engine panicked: {msg}"))),
    }
}

/// The engine's default scenario as JSON (with `servers` 0, which is invalid):
/// lets the Python mirror check that it knows every engine field.
#[pyfunction]
fn default_scenario_json() -> PyResult<String> {
    serde_json::to_string(&Scenario::default()).map_err(|e| SimulationError::new_err(e.to_string()))
}

/// Version of the engine this module was built from.
#[pyfunction]
fn engine_version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Native core of the `incast` package (private; import `incast` instead).
#[pymodule]
mod _core {
    #[pymodule_export]
    use super::{
        default_scenario_json, engine_version, run_json, run_json_capture, IncastError, ScenarioError, SimulationError,
    };
}
