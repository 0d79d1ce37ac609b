// Creates and fills the many small topics of `scripts/bench topics`, with
// Kafka's own Java clients from the cached jars (run through scripts/kafka-run,
// which hands this file to the JVM's source launcher). One JVM for all of
// them: kafka-topics.sh and kcat take one topic per run, and 500 JVM starts
// would take longer than the measurement.
//
// Usage:
//   scripts/kafka-run scripts/lib/ManyTopics.java create BOOTSTRAP PREFIX COUNT PARTITIONS
//   scripts/kafka-run scripts/lib/ManyTopics.java fill   BOOTSTRAP PREFIX COUNT RECORDS SIZE
//   scripts/kafka-run scripts/lib/ManyTopics.java probe  BOOTSTRAP TOPIC
//   scripts/kafka-run scripts/lib/ManyTopics.java times  BOOTSTRAP PREFIX
// Topics are PREFIX0000 .. PREFIX(COUNT-1), four digits. `fill` writes
// RECORDS keyed records of SIZE bytes to each (acks=all) and exits once all
// are acknowledged; any failure exits non-zero with the broker's reason.
// `probe` creates TOPIC (one partition), writes one record to it (acks=all,
// waiting as long as the broker needs) and deletes it: a broker applies its
// metadata in order, so once the probe is written every earlier creation
// and deletion has been applied (a broker bringing up or removing thousands
// of partitions takes seconds; the bench waits for it between runs).
// `times` reads every record of every PREFIX topic and prints one line:
// "records N first_ms F last_ms L type T", the smallest and largest record
// timestamps and their type (LogAppendTime on a broker with
// log.message.timestamp.type=LogAppendTime: when the broker wrote them).

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class ManyTopics {
    // CreateTopics requests of this many topics: one request per chunk.
    static final int CHUNK = 500;

    static String name(String prefix, int i) {
        return String.format("%s%04d", prefix, i);
    }

    public static void main(String[] a) throws Exception {
        if (a.length == 3 && a[0].equals("probe")) {
            probe(a[1], a[2]);
            return;
        }
        if (a.length == 3 && a[0].equals("times")) {
            times(a[1], a[2]);
            return;
        }
        if (a.length < 5) {
            System.err.println("usage: ManyTopics create BOOTSTRAP PREFIX COUNT PARTITIONS | fill BOOTSTRAP PREFIX COUNT RECORDS SIZE"
                    + " | probe BOOTSTRAP TOPIC | times BOOTSTRAP PREFIX");
            System.exit(2);
        }
        String bootstrap = a[1], prefix = a[2];
        int count = Integer.parseInt(a[3]);
        switch (a[0]) {
            case "create" -> create(bootstrap, prefix, count, Integer.parseInt(a[4]));
            case "fill" -> fill(bootstrap, prefix, count, Integer.parseInt(a[4]), Integer.parseInt(a[5]));
            default -> {
                System.err.println("ManyTopics: unknown mode " + a[0]);
                System.exit(2);
            }
        }
    }

    static void create(String bootstrap, String prefix, int count, int partitions) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        try (Admin admin = Admin.create(p)) {
            for (int from = 0; from < count; from += CHUNK) {
                List<NewTopic> chunk = new ArrayList<>();
                for (int i = from; i < Math.min(count, from + CHUNK); i++) {
                    chunk.add(new NewTopic(name(prefix, i), partitions, (short) 1));
                }
                admin.createTopics(chunk).all().get();
            }
            // Writing before every partition has its leader draws
            // NOT_LEADER_OR_FOLLOWER retries; wait until the metadata says so.
            List<String> names = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                names.add(name(prefix, i));
            }
            long deadline = System.currentTimeMillis() + 300_000;
            while (!ready(admin, names, partitions)) {
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("topics " + prefix + "* have no leaders after 300 s");
                }
                Thread.sleep(200);
            }
        }
    }

    // Whether every topic is known with all its partitions led. Just after
    // a CreateTopics of thousands the broker may not know some of them yet
    // (UNKNOWN_TOPIC_OR_PARTITION): not ready, asked again.
    static boolean ready(Admin admin, List<String> names, int partitions) throws InterruptedException {
        try {
            return admin.describeTopics(names).allTopicNames().get().values().stream()
                    .allMatch(d -> d.partitions().size() == partitions && d.partitions().stream().allMatch(x -> x.leader() != null));
        } catch (java.util.concurrent.ExecutionException e) {
            return false;
        }
    }

    static void fill(String bootstrap, String prefix, int count, int records, int size) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("acks", "all");
        // One request in flight: a retried batch can never leave a gap in the
        // idempotent sequence (OUT_OF_ORDER_SEQUENCE_NUMBER retried forever
        // was seen on just-created topics with five).
        p.put("max.in.flight.requests.per.connection", "1");
        p.put("linger.ms", "20");
        p.put("batch.size", "262144");
        p.put("key.serializer", ByteArraySerializer.class.getName());
        p.put("value.serializer", ByteArraySerializer.class.getName());
        AtomicReference<Exception> failed = new AtomicReference<>();
        byte[] pad = new byte[size];
        Arrays.fill(pad, (byte) 'x');
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            for (int t = 0; t < count; t++) {
                String topic = name(prefix, t);
                for (int i = 0; i < records; i++) {
                    // The topic and the record's number at the front keep values distinct.
                    byte[] value = pad.clone();
                    byte[] head = (topic + "/" + i + "/").getBytes(StandardCharsets.UTF_8);
                    System.arraycopy(head, 0, value, 0, Math.min(head.length, size));
                    byte[] key = ("key-" + i).getBytes(StandardCharsets.UTF_8);
                    producer.send(new ProducerRecord<>(topic, key, value), (md, e) -> {
                        if (e != null) {
                            failed.compareAndSet(null, e);
                        }
                    });
                }
            }
            producer.flush();
        }
        if (failed.get() != null) {
            System.err.println("ManyTopics: a record was refused: " + failed.get());
            System.exit(1);
        }
    }

    static void probe(String bootstrap, String topic) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        try (Admin admin = Admin.create(p)) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
            p.put("acks", "all");
            p.put("delivery.timeout.ms", "300000");
            p.put("max.block.ms", "300000");
            p.put("key.serializer", ByteArraySerializer.class.getName());
            p.put("value.serializer", ByteArraySerializer.class.getName());
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
                producer.send(new ProducerRecord<>(topic, new byte[1])).get();
            }
            admin.deleteTopics(List.of(topic)).all().get();
        }
    }

    static void times(String bootstrap, String prefix) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("enable.auto.commit", "false");
        p.put("max.poll.records", "10000");
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        long records = 0, first = Long.MAX_VALUE, last = Long.MIN_VALUE;
        String type = "none";
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            List<TopicPartition> parts = new ArrayList<>();
            for (var e : consumer.listTopics().entrySet()) {
                if (e.getKey().startsWith(prefix)) {
                    for (PartitionInfo i : e.getValue()) {
                        parts.add(new TopicPartition(i.topic(), i.partition()));
                    }
                }
            }
            consumer.assign(parts);
            consumer.seekToBeginning(parts);
            var ends = consumer.endOffsets(parts);
            long want = ends.values().stream().mapToLong(Long::longValue).sum();
            long deadline = System.currentTimeMillis() + 600_000;
            while (records < want && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(java.time.Duration.ofMillis(500))) {
                    records++;
                    first = Math.min(first, r.timestamp());
                    last = Math.max(last, r.timestamp());
                    type = r.timestampType().toString().replace(" ", "");
                }
            }
        }
        System.out.println("records " + records + " first_ms " + first + " last_ms " + last + " type " + type);
    }
}
