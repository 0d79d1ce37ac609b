// What a read_committed consumer of the target sees, for `scripts/bench eos`
// (issue #29): the bench's judge of completion and of end-to-end latency,
// with Kafka's own Java consumer from the cached jars (run through
// scripts/kafka-run, which hands this file to the JVM's source launcher).
//
// Usage:
//   scripts/kafka-run scripts/lib/Committed.java BOOTSTRAP TOPIC STATE_FILE [SINCE_FILE]
//
// Waits until TOPIC exists (without creating it: allow.auto.create.topics
// is false, so asking does not make the broker auto-create it), assigns
// every partition from the beginning, reads isolation.level=read_committed
// (an open or aborted transaction's records are never counted; a
// non-transactional topic reads the same as read_uncommitted) and, every
// 200 ms until killed, replaces STATE_FILE with:
//   count N                       records read, over every partition
//   partition P N                 per partition
//   latency N P50 P99 MAX         ms from a record's timestamp (the source's
//                                 CreateTime, which MirrorMaker keeps) to the
//                                 moment this consumer got it, over the N
//                                 records stamped at or after the epoch
//                                 millisecond SINCE_FILE holds (none counted
//                                 until that file exists)
// The file is written to a temporary name and renamed, so a reader never
// sees half of it. Latencies go into 1 ms buckets up to 10 minutes.

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.TreeMap;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public class Committed {
    static final int BUCKETS = 600_000;

    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            System.err.println("usage: Committed BOOTSTRAP TOPIC STATE_FILE [SINCE_FILE]");
            System.exit(2);
        }
        String topic = args[1];
        Path state = Path.of(args[2]);
        Path since = args.length > 3 ? Path.of(args[3]) : null;
        Properties p = new Properties();
        p.put("bootstrap.servers", args[0]);
        p.put("isolation.level", "read_committed");
        p.put("allow.auto.create.topics", "false");
        p.put("auto.offset.reset", "earliest");
        p.put("enable.auto.commit", "false");
        p.put("max.poll.records", "10000");
        p.put("fetch.max.bytes", "104857600");
        p.put("max.partition.fetch.bytes", "16777216");
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
            List<PartitionInfo> infos;
            while (true) {
                infos = c.listTopics(Duration.ofSeconds(5)).get(topic);
                if (infos != null && !infos.isEmpty()) {
                    break;
                }
                write(state, "count 0\n");
                Thread.sleep(200);
            }
            List<TopicPartition> tps = new ArrayList<>();
            for (PartitionInfo i : infos) {
                tps.add(new TopicPartition(topic, i.partition()));
            }
            c.assign(tps);
            c.seekToBeginning(tps);
            TreeMap<Integer, Long> per = new TreeMap<>();
            for (TopicPartition tp : tps) {
                per.put(tp.partition(), 0L);
            }
            long[] hist = new long[BUCKETS + 1];
            long count = 0, measured = 0, max = 0;
            long from = Long.MAX_VALUE;
            long lastWrite = 0;
            while (true) {
                ConsumerRecords<byte[], byte[]> records = c.poll(Duration.ofMillis(100));
                long now = System.currentTimeMillis();
                if (from == Long.MAX_VALUE && since != null && Files.exists(since)) {
                    String s = Files.readString(since).trim();
                    if (!s.isEmpty()) {
                        from = Long.parseLong(s);
                    }
                }
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    count++;
                    per.merge(r.partition(), 1L, Long::sum);
                    if (r.timestamp() >= from) {
                        long lat = Math.max(0, now - r.timestamp());
                        hist[(int) Math.min(lat, BUCKETS)]++;
                        measured++;
                        max = Math.max(max, lat);
                    }
                }
                if (now - lastWrite >= 200) {
                    StringBuilder b = new StringBuilder();
                    b.append("count ").append(count).append('\n');
                    per.forEach((k, v) -> b.append("partition ").append(k).append(' ').append(v).append('\n'));
                    b.append("latency ").append(measured).append(' ').append(pct(hist, measured, 0.50)).append(' ')
                        .append(pct(hist, measured, 0.99)).append(' ').append(max).append('\n');
                    write(state, b.toString());
                    lastWrite = now;
                }
            }
        }
    }

    /** The smallest bucket at or below which a fraction q of the n samples lie. */
    static long pct(long[] hist, long n, double q) {
        if (n == 0) {
            return -1;
        }
        long want = (long) Math.ceil(q * n), seen = 0;
        for (int i = 0; i < hist.length; i++) {
            seen += hist[i];
            if (seen >= want) {
                return i;
            }
        }
        return hist.length - 1;
    }

    static void write(Path state, String text) throws Exception {
        Path tmp = state.resolveSibling(state.getFileName() + ".tmp");
        Files.writeString(tmp, text);
        Files.move(tmp, state, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }
}
