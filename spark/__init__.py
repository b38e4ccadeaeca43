"""Spark 4 Python data source for Odradek (format ``odradek``) and example pipelines.

Importing this package does not import pyspark; ``odradek.spark.data_source`` does.
"""
