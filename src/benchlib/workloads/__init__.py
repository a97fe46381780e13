"""Workloads: what a notebook measures, built on one lifecycle and one measurement path."""
