"""A one-machine testbed on the real Linux TCP stack: network namespaces, a bridge and a ``tbf`` switch port.

    >>> from incast import Scenario, testbed
    >>> s = Scenario(servers=8, blocks=100, link={"rate": "200Mbps"}, workload={"sru": "64KiB"})
    >>> r = testbed.run(s)                  # needs root
    >>> r.goodput_mbps, r.timeouts, r.kernel["hz"]

:func:`run` builds one client and ``servers`` server namespaces on a bridge
(:mod:`incast.testbed.netns`), applies the scenario's TCP settings to each
(:mod:`incast.testbed.plan`), runs ``incast read`` against ``incast serve``
(:mod:`incast.testbed.run`) and tears everything down. :func:`notes` lists
the fields the kernel runs differently, :func:`cleanup` removes what a killed
run left behind, and :func:`clock` reports the kernel's HZ.
"""

from incast.scenario import Scenario
from incast.testbed.errors import TestbedError, TestbedUnavailable
from incast.testbed.kernel import KernelClock, available_congestion_controls, clock, require_privileges
from incast.testbed.netns import cleanup, leftovers, namespaces
from incast.testbed.plan import Plan, plan
from incast.testbed.run import TestbedResult, run

__all__ = [
    "KernelClock",
    "Plan",
    "TestbedError",
    "TestbedResult",
    "TestbedUnavailable",
    "cleanup",
    "clock",
    "leftovers",
    "namespaces",
    "notes",
    "plan_for",
    "require_privileges",
    "run",
]


def plan_for(scenario: Scenario) -> Plan:
    """The testbed's settings for ``scenario`` on this kernel; ScenarioError for a field it cannot honour."""
    return plan(scenario, clock(), available_congestion_controls())


def notes(scenario: Scenario) -> list[str]:
    """One line per field of ``scenario`` the testbed runs differently (see :mod:`incast.testbed.plan`)."""
    return plan_for(scenario).notes
