"""Reference simulators and the testbed, run on the same scenario as the engine (``incast validate --against``).

Each is a :class:`~incast.reference.base.Reference` (``base``: the interface,
its refusal rules and the one function that turns them into an error):
``ns2`` (ns-2.35, its Tcl from ``ns2.tcl``), ``ns3_options`` (ns-3 3.44 through
the ``ns3.py`` harness, a script run by an interpreter with the ``ns3``
wheel) and ``testbed`` (the Linux stack, :mod:`incast.testbed`). ``compare``
sets the simulator's figures beside a reference's.
"""
