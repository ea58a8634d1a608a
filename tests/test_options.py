"""The named options: declared once (``incast.cli.options``), one meaning per flag in every verb, and a
command line's scenario built in one call into the engine."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from functools import cache
from typing import Any

import pytest
from typer.main import get_command

from incast import Scenario, _core
from incast.cli import app, main, read, run, testbed, validate
from incast.cli.options import NAMED, OPTION_FIELDS
from incast.cli.testbed import NAMED_OPTIONS, scenarios
from incast.testbed import KernelClock, plan

#: The verbs that take named options, and the ones each takes.
VERBS: dict[str, tuple[Callable[..., Any], tuple[str, ...]]] = {
    "run": (run.run, tuple(OPTION_FIELDS)),
    "testbed": (testbed.testbed, NAMED_OPTIONS),
    "validate": (validate.validate, NAMED_OPTIONS),
    "read": (read.read, ("sru", "block", "blocks", "max_inflight", "stagger", "delayed_ack")),
}


@cache
def commands() -> dict[str, Any]:
    """Every verb's command, as typer builds it from the verb's signature."""
    return dict(get_command(app).commands)


def params(verb: str) -> list[Any]:
    return list(commands()[verb].params)


def test_every_verbs_named_options_are_the_one_declaration() -> None:
    """Each verb's --sru, --delayed-ack, ... is the object in NAMED, and no verb declares a flag of a
    named option by hand."""
    flags = {"--" + name.replace("_", "-"): name for name in NAMED}
    for verb, (function, names) in VERBS.items():
        signature = inspect.signature(function)
        assert [n for n in signature.parameters if n in NAMED] == list(names), verb
        for name in names:
            assert signature.parameters[name].annotation is NAMED[name], f"{verb} --{name}"
            declared = NAMED[name].__metadata__[0]
            [param] = [p for p in params(verb) if p.name == name]
            assert (param.opts, param.metavar, param.help) == ([declared.default], declared.metavar, declared.help)
    for verb, cmd in commands().items():
        for param in cmd.params:
            for flag in param.opts:
                assert flags.get(flag, param.name) == param.name, f"{verb} declares {flag} itself"


def test_a_flag_means_the_same_in_every_verb_that_has_it() -> None:
    """--duration is the scenario's duration (stop at this simulated time) wherever it is; read's
    "start no block after" is --start-until. --delayed-ack takes tcp.delayed_ack's words everywhere."""
    uses: dict[str, dict[str, tuple[str | None, str | None]]] = {}
    for verb in [*VERBS, "serve"]:
        for param in params(verb):
            for flag in param.opts:
                uses.setdefault(flag, {})[verb] = (param.metavar, getattr(param, "help", None))
    # validate's --preset is one name, by default the reference's own; run's may be a list.
    for flag, meaning in uses.items():
        assert flag == "--preset" or len(set(meaning.values())) == 1, f"{flag} differs between {', '.join(meaning)}"
    assert set(uses["--duration"]) == {"run", "testbed", "validate"}
    assert set(uses["--delayed-ack"]) == {"run", "testbed", "validate", "read"}
    assert set(uses["--start-until"]) == {"read"}
    assert set(uses["--congestion"]) == set(uses["--nodelay"]) == {"read", "serve"}
    metavar, help = uses["--duration"]["run"]
    assert metavar == "DURATION" and "Stop at this simulated time" in str(help) and "--start-until" in str(help)
    metavar, help = uses["--delayed-ack"]["read"]
    assert metavar == "DURATION|off|linux|adaptive" and "linux and off" in str(help)


def test_duration_and_delayed_ack_are_the_same_settings_in_run_and_on_the_testbed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The testbed runs the scenario's duration and delayed ACK with incast read's options of the same meaning."""
    assert main(["run", "--servers", "2", "--duration", "20ms", "--delayed-ack", "off", "--json"]) == 0
    simulated = Scenario.parse(json.loads(capsys.readouterr().out)["scenario"])
    [on_the_testbed] = scenarios(None, "2", {"duration": "20ms", "delayed_ack": "off"}, None)
    assert on_the_testbed == simulated
    assert (simulated.duration, simulated.tcp.delayed_ack) == (0.02, None)
    read_options = plan(on_the_testbed, KernelClock(250, "test"), ["reno"]).read_options
    assert read_options[read_options.index("--start-until") + 1] == "20ms"
    assert read_options[read_options.index("--delayed-ack") + 1] == "off"
    linux = plan(on_the_testbed.with_overrides({"tcp.delayed_ack": "linux"}), KernelClock(250, "test"), ["reno"])
    assert linux.read_options[linux.read_options.index("--delayed-ack") + 1] == "linux"
    read_flags = {flag for param in params("read") for flag in param.opts}
    assert {flag for flag in read_options if flag.startswith("--")} <= read_flags


@pytest.fixture
def crossings(monkeypatch: pytest.MonkeyPatch) -> list[list[tuple[str, Any]]]:
    """The override lists handed to the engine, one per call of ``_core.apply_overrides_json``."""
    calls: list[list[tuple[str, Any]]] = []
    apply = _core.apply_overrides_json

    def counted(scenario_json: str, overrides_json: str) -> str:
        calls.append([tuple(pair) for pair in json.loads(overrides_json)])
        return apply(scenario_json, overrides_json)

    monkeypatch.setattr(_core, "apply_overrides_json", counted)
    return calls


def test_a_command_line_crosses_into_the_engine_once_per_scenario(
    crossings: list[list[tuple[str, Any]]], capsys: pytest.CaptureFixture[str]
) -> None:
    """Preset, file, named options and --set reach the engine as one list, later winning."""
    args = ["run", "--preset", "linux", "--servers", "2", "--blocks", "1", "--sru", "16KiB", "--rto-min", "5ms"]
    args += ["--delayed-ack", "off", "--tcp", "sack", "--loss", "0.001", "--set", "tcp.rto_min=1ms", "--json"]
    assert main(args) == 0
    [d] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    [overrides] = crossings
    named = [("workload.sru", "16KiB"), ("blocks", "1"), ("tcp.rto_min", "5ms"), ("tcp.delayed_ack", "off")]
    named += [("tcp.cc", "reno"), ("tcp.recovery", "sack"), ("link.loss", 0.001)]
    assert overrides[-len(named) - 1 :] == [*named, ("tcp.rto_min", "1ms")]
    assert ("tcp.rto_flavor", "linux") in overrides[: -len(named) - 2], "the preset comes first"
    tcp = d["scenario"]["tcp"]
    assert (tcp["rto_min"], tcp["delayed_ack"], tcp["cc"], tcp["recovery"]) == (0.001, "off", "reno", "sack")

    crossings.clear()
    assert main(["run", "--servers", "1,2", "--seed", "1,2", "--blocks", "1", "--rto-min", "1ms", "--json"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == len(crossings) == 4
    crossings.clear()
    scenarios(None, "1,2,4", {"blocks": "1", "rto_min": "1ms", "tcp": "cubic"}, ["seed=3"], "linux")
    assert len(crossings) == 3
