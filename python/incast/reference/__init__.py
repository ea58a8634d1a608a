"""Reference simulators run on the same scenario as the engine (``incast validate --against``)."""
