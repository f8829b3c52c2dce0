"""Simulated environments in which agent cores are benchmarked (see :mod:`clineval.environments.radbench`)."""
