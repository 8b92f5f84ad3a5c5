"""Driver of bench/node_cost.py's Spark phase, run by its own python3 so
that the JVMs it starts belong to it (pyspark, JDK 17).

    spark_queries.py generate DATA_DIR SCALE
        writes TPC-H-like parquet tables (lineitem, orders, customer) made in
        Spark itself from spark.range and expressions, in local[2] mode;
    spark_queries.py run DATA_DIR MASTER JAVA_OPTS GO RELEASE [SECONDS]
        starts the application, prints {"ready": app id} once every executor
        has registered, waits for the file GO, runs the queries (again and
        again until SECONDS have passed, if given), prints
        {"queries": {name: seconds}, "seconds": total, "rounds": n}, waits
        for the file RELEASE and stops.

SCALE is the number of lineitem rows in millions (orders: a quarter of it,
customer: a fortieth).
"""
import json
import os
import sys
import time

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def session(master, java_opts=""):
    b = (SparkSession.builder.master(master).appName("sparkprof-node-cost")
         .config("spark.executor.memory", "512m")
         .config("spark.driver.memory", "768m")
         .config("spark.sql.shuffle.partitions", "4")
         .config("spark.sql.adaptive.enabled", "false")
         .config("spark.sql.autoBroadcastJoinThreshold", "-1")
         .config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false"))
    if java_opts:
        b = b.config("spark.executor.extraJavaOptions", java_opts)
    return b.getOrCreate()


def generate(data_dir, scale):
    spark = session("local[2]")
    n_line = int(scale * 1_000_000)
    n_orders = n_line // 4
    n_cust = max(n_line // 40, 1000)
    spark.range(0, n_cust, numPartitions=2).selectExpr(
        "id as c_custkey",
        "concat('Customer#', lpad(cast(id as string), 9, '0')) as c_name",
        "element_at(array('AUTOMOBILE','BUILDING','FURNITURE','HOUSEHOLD','MACHINERY'),"
        " cast(id % 5 as int) + 1) as c_mktsegment",
        "cast(id % 25 as int) as c_nationkey",
    ).write.mode("overwrite").parquet(os.path.join(data_dir, "customer"))
    spark.range(0, n_orders, numPartitions=4).selectExpr(
        "id as o_orderkey",
        f"(id * 7919) % {n_cust} as o_custkey",
        "date_add(date'1992-01-01', cast((id * 31) % 2400 as int)) as o_orderdate",
        "element_at(array('1-URGENT','2-HIGH','3-MEDIUM','4-NOT SPECIFIED','5-LOW'),"
        " cast(id % 5 as int) + 1) as o_orderpriority",
        "cast(id % 3 as int) as o_shippriority",
    ).write.mode("overwrite").parquet(os.path.join(data_dir, "orders"))
    spark.range(0, n_line, numPartitions=8).selectExpr(
        f"(id * 104729) % {n_orders} as l_orderkey",
        "cast(1 + id % 50 as double) as l_quantity",
        "cast(900 + (id * 13) % 100000 / 100.0 as double) as l_extendedprice",
        "cast((id % 11) / 100.0 as double) as l_discount",
        "cast((id % 9) / 100.0 as double) as l_tax",
        "element_at(array('A','N','R'), cast(id % 3 as int) + 1) as l_returnflag",
        "element_at(array('F','O'), cast(id % 2 as int) + 1) as l_linestatus",
        "date_add(date'1992-01-02', cast((id * 17) % 2500 as int)) as l_shipdate",
        "date_add(date'1992-01-30', cast((id * 23) % 2500 as int)) as l_commitdate",
        "date_add(date'1992-02-15', cast((id * 29) % 2500 as int)) as l_receiptdate",
        "element_at(array('AIR','MAIL','SHIP','TRUCK','RAIL','FOB','REG AIR'),"
        " cast(id % 7 as int) + 1) as l_shipmode",
        "substr(sha2(cast(id as string), 256), 1, 24) as l_comment",
    ).write.mode("overwrite").parquet(os.path.join(data_dir, "lineitem"))
    spark.stop()


def queries(spark, data_dir):
    li = spark.read.parquet(os.path.join(data_dir, "lineitem"))
    orders = spark.read.parquet(os.path.join(data_dir, "orders"))
    cust = spark.read.parquet(os.path.join(data_dir, "customer"))
    disc_price = F.col("l_extendedprice") * (1 - F.col("l_discount"))
    return {
        # Q1: pricing summary (scan, aggregation)
        "q1": lambda: (li.where(F.col("l_shipdate") <= F.lit("1998-09-02").cast("date"))
                       .groupBy("l_returnflag", "l_linestatus")
                       .agg(F.sum("l_quantity"), F.sum("l_extendedprice"), F.sum(disc_price),
                            F.sum(disc_price * (1 + F.col("l_tax"))), F.avg("l_quantity"),
                            F.avg("l_discount"), F.count("*"))
                       .orderBy("l_returnflag", "l_linestatus").collect()),
        # Q3: shipping priority (three-way shuffle join, top 10)
        "q3": lambda: (cust.where(F.col("c_mktsegment") == "BUILDING")
                       .join(orders.where(F.col("o_orderdate") < F.lit("1995-03-15").cast("date")),
                             F.col("c_custkey") == F.col("o_custkey"))
                       .join(li.where(F.col("l_shipdate") > F.lit("1995-03-15").cast("date")),
                             F.col("l_orderkey") == F.col("o_orderkey"))
                       .groupBy("l_orderkey", "o_orderdate", "o_shippriority")
                       .agg(F.sum(disc_price).alias("revenue"))
                       .orderBy(F.desc("revenue"), "o_orderdate").limit(10).collect()),
        # Q6: forecasting revenue change (scan, filter)
        "q6": lambda: (li.where((F.col("l_shipdate") >= F.lit("1994-01-01").cast("date"))
                                & (F.col("l_shipdate") < F.lit("1995-01-01").cast("date"))
                                & F.col("l_discount").between(0.05, 0.07)
                                & (F.col("l_quantity") < 24))
                       .agg(F.sum(F.col("l_extendedprice") * F.col("l_discount"))).collect()),
        # Q12: shipping modes and order priority (join, conditional aggregation)
        "q12": lambda: (orders.join(li.where(F.col("l_shipmode").isin("MAIL", "SHIP")
                                             & (F.col("l_commitdate") < F.col("l_receiptdate"))
                                             & (F.col("l_shipdate") < F.col("l_commitdate"))),
                                    F.col("o_orderkey") == F.col("l_orderkey"))
                        .groupBy("l_shipmode")
                        .agg(F.sum(F.when(F.col("o_orderpriority").isin("1-URGENT", "2-HIGH"), 1)
                                   .otherwise(0)).alias("high"),
                             F.sum(F.when(~F.col("o_orderpriority").isin("1-URGENT", "2-HIGH"), 1)
                                   .otherwise(0)).alias("low"),
                             F.count(F.col("l_comment")))
                        .orderBy("l_shipmode").collect()),
    }


def run(data_dir, master, java_opts, go, release, repeat_seconds="0"):
    spark = session(master, java_opts)
    sc = spark.sparkContext
    want = int(master.split("[")[1].split(",")[0]) if master.startswith("local-cluster[") else 0
    deadline = time.time() + 600
    while sc._jsc.sc().getExecutorMemoryStatus().size() < want + 1 and time.time() < deadline:
        time.sleep(0.2)
    print(json.dumps({"ready": sc.applicationId}), flush=True)
    while not os.path.exists(go) and time.time() < deadline:
        time.sleep(0.05)
    times = {}
    t0 = time.monotonic()
    rounds = 0
    while rounds == 0 or time.monotonic() - t0 < float(repeat_seconds):
        for name, query in queries(spark, data_dir).items():
            t = time.monotonic()
            query()
            times[name] = round(time.monotonic() - t, 3)
        rounds += 1
    print(json.dumps({"queries": times, "seconds": round(time.monotonic() - t0, 3),
                      "rounds": rounds}), flush=True)
    deadline = time.time() + 1800
    while not os.path.exists(release) and time.time() < deadline:
        time.sleep(0.1)
    spark.stop()


if __name__ == "__main__":
    if sys.argv[1] == "generate":
        generate(sys.argv[2], float(sys.argv[3]))
    else:
        run(*sys.argv[2:8])
