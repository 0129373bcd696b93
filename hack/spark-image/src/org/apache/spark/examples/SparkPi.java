package org.apache.spark.examples;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;

/**
 * A stand-in for Spark's own SparkPi example, whose jar (spark-examples) is not published to
 * Maven Central: the same class name, argument and output, written against the Java API so that
 * hack/spark-image.sh builds it with javac alone. It estimates Pi by throwing random darts at
 * the square [-1, 1]², slices (the first argument, 2 by default) tasks of 100,000 darts each,
 * and prints "Pi is roughly 3.14…" to standard output.
 */
public final class SparkPi {
  private SparkPi() {}

  public static void main(String[] args) {
    int slices = args.length > 0 ? Integer.parseInt(args[0]) : 2;
    int n = (int) Math.min(100000L * slices, Integer.MAX_VALUE);
    SparkSession spark = SparkSession.builder().appName("Spark Pi").getOrCreate();
    try {
      JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
      // One element per slice, each the number of darts its task throws: the driver ships
      // slices numbers, not n.
      List<Integer> darts = new ArrayList<>(slices);
      for (int i = 0; i < slices; i++) {
        darts.add(n / slices + (i < n % slices ? 1 : 0));
      }
      long inside = jsc.parallelize(darts, slices).map(SparkPi::throwDarts).reduce(Long::sum);
      System.out.println("Pi is roughly " + 4.0 * inside / n);
    } finally {
      spark.stop();
    }
  }

  /** throwDarts throws count random darts and returns how many fall inside the unit circle. */
  static long throwDarts(int count) {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    long inside = 0;
    for (int i = 0; i < count; i++) {
      double x = random.nextDouble() * 2 - 1;
      double y = random.nextDouble() * 2 - 1;
      if (x * x + y * y <= 1) {
        inside++;
      }
    }
    return inside;
  }
}
