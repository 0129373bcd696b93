"""Runs one query through a Spark Connect server, as a notebook would, and prints its answer.

    python hack/spark-connect-query.py sc://HOST:PORT

The query sums 0..999 on the server's executors (8 partitions, so tasks spread over them) and
prints "sum=499500"; it exits non-zero if the answer is wrong or the server cannot be reached.
Run it with the client hack/install-spark.sh connect-client installs.
"""
import sys

from pyspark.sql import SparkSession

if len(sys.argv) != 2:
    sys.exit(__doc__)
spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()
total = spark.range(0, 1000, 1, 8).groupBy().sum("id").collect()[0][0]
print("sum=%d" % total)
spark.stop()
sys.exit(0 if total == 499500 else 1)
