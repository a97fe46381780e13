"""Presenting: a run's report (RunReport, the one renderer), plots, the reports site's pages and
templates, and the first call of every notebook. It imports benchlib.run and the layers below
(findings and results from benchlib.data, titles and colours from benchlib.engines); workloads,
compare, batch and the CLI import it."""
