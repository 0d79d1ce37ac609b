// Asks Kafka's own MirrorMaker 2 client library what it makes of a cluster,
// so that tests can check mirror-maker's MM2 side effects with the Java tools
// users run against them (reference §0, §3.2). Run through
// scripts/mirror-client/run, which compiles this file and puts the Kafka jars
// on the class path.
//
//   topology BOOTSTRAP [SOURCE_ALIAS] [--policy identity|default]
//       MirrorClient's topology calls, one line each, sorted:
//       checkpointTopics=..., heartbeatTopics=..., remoteTopics=...,
//       remoteTopics(SOURCE_ALIAS)=..., replicationHops(<alias>)=<n> for every
//       upstream cluster, upstreamClusters=... (lists are sorted csv).
//       --policy identity configures IdentityReplicationPolicy, which needs
//       source.cluster.alias: SOURCE_ALIAS is passed as that.
//   heartbeats BOOTSTRAP TOPIC N
//       Reads up to N records of TOPIC from the beginning (every partition,
//       up to the end offsets at start) and prints each as decoded by
//       Heartbeat.deserializeRecord: "sourceClusterAlias targetClusterAlias
//       timestamp". A record that fails to decode, or has bytes past what
//       Java's schemas read (Java ignores them; a faithful writer has none),
//       is reported on stderr and makes the exit status 1.
//   translate BOOTSTRAP REMOTE_ALIAS GROUP [--policy identity|default]
//       RemoteClusterUtils.translateOffsets(props, REMOTE_ALIAS, GROUP, 30 s)
//       on the cluster at BOOTSTRAP (the target of a REMOTE_ALIAS->... flow):
//       where GROUP should resume there, from the checkpoints in
//       checkpointsTopic(REMOTE_ALIAS) (reference §3.3). One line per
//       partition, "topic partition offset", sorted by topic then partition;
//       nothing when the topic holds no checkpoint of GROUP. The checkpoints
//       topic must exist (it is looked for first, so that asking does not
//       auto-create it): exit 1 when it does not. --policy identity as for
//       topology, with source.cluster.alias=REMOTE_ALIAS.
//   checkpoints BOOTSTRAP TOPIC
//       Every record of partition 0 of TOPIC (the checkpoints topic, e.g.
//       A.checkpoints.internal), from the beginning to the end offset at
//       start, decoded by Checkpoint.deserializeRecord: "group topic
//       partition upstreamOffset downstreamOffset metadata" (metadata last,
//       possibly empty).
//   offset-syncs BOOTSTRAP TOPIC
//       Every record of partition 0 of TOPIC (e.g.
//       mm2-offset-syncs.B.internal), decoded by OffsetSync.deserializeRecord
//       (connect-mirror's class, reference §3.4): "topic partition
//       upstreamOffset downstreamOffset".
//   syncstore BOOTSTRAP SYNCS_TOPIC [--must-read-to-end] [GROUP TOPIC PARTITION UPSTREAM]...
//       connect-mirror's OffsetSyncStore over SYNCS_TOPIC, asked to translate
//       each position as MM2's checkpoint task does; see SyncStoreProbe.java
//       (beside this file, in package org.apache.kafka.connect.mirror because
//       the store is package-private).
//   For checkpoints and offset-syncs, as for heartbeats, a record that fails
//   to decode or has bytes past what the schemas read is reported on stderr
//   with its offset and makes the exit status 1.
//
// Exit status: 0 fine, 1 a record failed to decode (or a topic is missing, or
// translateOffsets failed), 2 usage.

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.connect.mirror.Checkpoint;
import org.apache.kafka.connect.mirror.Heartbeat;
import org.apache.kafka.connect.mirror.IdentityReplicationPolicy;
import org.apache.kafka.connect.mirror.MirrorClient;
import org.apache.kafka.connect.mirror.MirrorClientConfig;
import org.apache.kafka.connect.mirror.OffsetSync;
import org.apache.kafka.connect.mirror.RemoteClusterUtils;
import org.apache.kafka.connect.mirror.SyncStoreProbe;

public final class MirrorClientProbe {
    private MirrorClientProbe() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            usage();
        }
        switch (args[0]) {
            case "topology":
                System.exit(topology(args));
                break;
            case "heartbeats":
                System.exit(heartbeats(args));
                break;
            case "translate":
                System.exit(translate(args));
                break;
            case "checkpoints":
                System.exit(checkpoints(args));
                break;
            case "offset-syncs":
                System.exit(offsetSyncs(args));
                break;
            case "syncstore":
                System.exit(SyncStoreProbe.run(args));
                break;
            default:
                usage();
        }
    }

    private static void usage() {
        System.err.println("usage: run topology BOOTSTRAP [SOURCE_ALIAS] [--policy identity|default]");
        System.err.println("       run heartbeats BOOTSTRAP TOPIC N");
        System.err.println("       run translate BOOTSTRAP REMOTE_ALIAS GROUP [--policy identity|default]");
        System.err.println("       run checkpoints BOOTSTRAP TOPIC");
        System.err.println("       run offset-syncs BOOTSTRAP TOPIC");
        System.err.println("       run syncstore BOOTSTRAP SYNCS_TOPIC [--must-read-to-end] [GROUP TOPIC PARTITION UPSTREAM]...");
        System.exit(2);
    }

    private static String csv(Set<String> s) {
        return String.join(",", new TreeSet<>(s));
    }

    /** Positional arguments and the --policy value (default "default"). */
    private static final class Args {
        final List<String> positional = new ArrayList<>();
        String policy = "default";

        Args(String[] args) {
            for (int i = 1; i < args.length; i++) {
                if (args[i].equals("--policy")) {
                    if (i + 1 >= args.length) {
                        usage();
                    }
                    policy = args[++i];
                } else {
                    positional.add(args[i]);
                }
            }
        }
    }

    /**
     * The client properties for the cluster at BOOTSTRAP under a policy:
     * MirrorClient(Map) builds its MirrorClientConfig from these (that
     * constructor is package-private), and the policy is configured with
     * the same map, which is where Identity reads source.cluster.alias.
     * Null (after saying why) for an unknown policy.
     */
    private static Map<String, Object> clientProps(String bootstrap, String policy, String sourceAlias) {
        Map<String, Object> props = new HashMap<>();
        props.put("bootstrap.servers", bootstrap);
        switch (policy) {
            case "default":
                break;
            case "identity":
                props.put(MirrorClientConfig.REPLICATION_POLICY_CLASS, IdentityReplicationPolicy.class.getName());
                if (sourceAlias != null) {
                    props.put("source.cluster.alias", sourceAlias);
                }
                break;
            default:
                System.err.println("unknown policy '" + policy + "': default or identity");
                return null;
        }
        return props;
    }

    private static int topology(String[] args) throws Exception {
        Args a = new Args(args);
        if (a.positional.isEmpty() || a.positional.size() > 2) {
            usage();
        }
        String bootstrap = a.positional.get(0);
        String sourceAlias = a.positional.size() > 1 ? a.positional.get(1) : null;
        Map<String, Object> props = clientProps(bootstrap, a.policy, sourceAlias);
        if (props == null) {
            return 2;
        }

        TreeMap<String, String> lines = new TreeMap<>();
        try (MirrorClient client = new MirrorClient(props)) {
            Set<String> upstream = client.upstreamClusters();
            lines.put("upstreamClusters", csv(upstream));
            lines.put("heartbeatTopics", csv(client.heartbeatTopics()));
            lines.put("checkpointTopics", csv(client.checkpointTopics()));
            lines.put("remoteTopics", csv(client.remoteTopics()));
            if (sourceAlias != null) {
                lines.put("remoteTopics(" + sourceAlias + ")", csv(client.remoteTopics(sourceAlias)));
            }
            for (String alias : new TreeSet<>(upstream)) {
                lines.put("replicationHops(" + alias + ")", Integer.toString(client.replicationHops(alias)));
            }
        }
        for (Map.Entry<String, String> e : lines.entrySet()) {
            System.out.println(e.getKey() + "=" + e.getValue());
        }
        return 0;
    }

    private static int translate(String[] args) throws Exception {
        Args a = new Args(args);
        if (a.positional.size() != 3) {
            usage();
        }
        String bootstrap = a.positional.get(0);
        String remoteAlias = a.positional.get(1);
        String group = a.positional.get(2);
        Map<String, Object> props = clientProps(bootstrap, a.policy, remoteAlias);
        if (props == null) {
            return 2;
        }
        // translateOffsets assigns partition 0 of the checkpoints topic; on a
        // cluster that auto-creates topics that would create it (not
        // compacted) before the mirror does. Look for it without creating.
        String checkpoints;
        try (MirrorClient client = new MirrorClient(props)) {
            checkpoints = client.replicationPolicy().checkpointsTopic(remoteAlias);
        }
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProps(bootstrap))) {
            if (!consumer.listTopics(Duration.ofSeconds(30)).containsKey(checkpoints)) {
                System.err.println("translate: no topic " + checkpoints + " on " + bootstrap);
                return 1;
            }
        }

        Map<TopicPartition, OffsetAndMetadata> offsets;
        try {
            offsets = RemoteClusterUtils.translateOffsets(props, remoteAlias, group, Duration.ofSeconds(30));
        } catch (Exception | AssertionError e) {
            // Under -ea (as run starts it) a checkpoint whose version header
            // is not 0 fails Checkpoint's assertion here; without -ea, Java
            // would read it as version 0.
            System.err.println("translate: translateOffsets(" + remoteAlias + ", " + group + ") on " + bootstrap
                + " failed: " + e);
            return 1;
        }
        TreeMap<TopicPartition, Long> sorted = new TreeMap<>(
            Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
        for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet()) {
            sorted.put(e.getKey(), e.getValue().offset());
        }
        for (Map.Entry<TopicPartition, Long> e : sorted.entrySet()) {
            System.out.println(e.getKey().topic() + " " + e.getKey().partition() + " " + e.getValue());
        }
        return 0;
    }

    private static int utf8Length(String s) {
        return s.getBytes(StandardCharsets.UTF_8).length;
    }

    /** A plain byte-array consumer that creates no topic and commits nothing. */
    private static Map<String, Object> consumerProps(String bootstrap) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        // Naming a topic that is not there must not create it (the test
        // clusters auto-create topics).
        props.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, "false");
        return props;
    }

    /**
     * Decodes one record: returns the line to print, or throws. A record
     * that decodes but is longer than the schemas read is reported through
     * Trailing (Java ignores such bytes; a faithful writer has none).
     */
    private interface Decoder {
        String decode(ConsumerRecord<byte[], byte[]> r);
    }

    private static final class Trailing extends RuntimeException {
        final String line;

        Trailing(String line, int keyLen, int keyWant, int valueLen, int valueWant) {
            super("decodes, but key is " + keyLen + " bytes (schema reads " + keyWant + ") and value " + valueLen
                + " bytes (schema reads " + valueWant + ")");
            this.line = line;
        }
    }

    /**
     * Reads TOPIC from the beginning up to the end offsets at start (every
     * partition, or partition 0 only: where MM2 writes and reads its internal
     * records), at most max records, and prints each as the decoder has it.
     * Returns the exit status: 1 if a record failed to decode.
     */
    private static int decodeAll(String what, String bootstrap, String topic, boolean partitionZeroOnly, long max,
                                 Decoder decoder) {
        int bad = 0;
        long read = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProps(bootstrap))) {
            List<PartitionInfo> infos = consumer.partitionsFor(topic, Duration.ofSeconds(30));
            if (infos == null || infos.isEmpty()) {
                System.err.println(what + ": topic " + topic + " not found on " + bootstrap);
                return 1;
            }
            List<TopicPartition> parts = new ArrayList<>();
            for (PartitionInfo p : infos) {
                if (!partitionZeroOnly || p.partition() == 0) {
                    parts.add(new TopicPartition(topic, p.partition()));
                }
            }
            consumer.assign(parts);
            consumer.seekToBeginning(parts);
            Map<TopicPartition, Long> end = new HashMap<>(consumer.endOffsets(parts, Duration.ofSeconds(30)));
            end.entrySet().removeIf(e -> consumer.position(e.getKey(), Duration.ofSeconds(30)) >= e.getValue());
            long deadline = System.currentTimeMillis() + 60_000;
            while (!end.isEmpty() && read < max) {
                if (System.currentTimeMillis() > deadline) {
                    System.err.println(what + ": could not read to the end offsets of " + end.keySet() + " within 60 s");
                    return 1;
                }
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                    Long stop = end.get(tp);
                    if (stop == null || r.offset() >= stop || read >= max) {
                        continue;
                    }
                    read++;
                    if (r.offset() + 1 >= stop) {
                        end.remove(tp);
                    }
                    String where = r.topic() + "-" + r.partition() + "@" + r.offset();
                    try {
                        System.out.println(decoder.decode(r));
                    } catch (Trailing t) {
                        System.err.println(what + ": " + where + ": " + t.getMessage());
                        System.out.println(t.line);
                        bad++;
                    } catch (RuntimeException | AssertionError e) {
                        System.err.println(what + ": " + where + ": does not decode: " + e);
                        bad++;
                    }
                }
            }
        }
        System.err.println(what + ": " + read + " records read, " + bad + " bad");
        return bad == 0 ? 0 : 1;
    }

    private static int heartbeats(String[] args) {
        if (args.length != 4) {
            usage();
        }
        return decodeAll("heartbeats", args[1], args[2], false, Long.parseLong(args[3]), r -> {
            Heartbeat h = Heartbeat.deserializeRecord(r);
            String line = h.sourceClusterAlias() + " " + h.targetClusterAlias() + " " + h.timestamp();
            int keyLen = 4 + utf8Length(h.sourceClusterAlias()) + utf8Length(h.targetClusterAlias());
            if (r.key().length != keyLen || r.value().length != 10) {
                throw new Trailing(line, r.key().length, keyLen, r.value().length, 10);
            }
            return line;
        });
    }

    private static int checkpoints(String[] args) {
        if (args.length != 3) {
            usage();
        }
        return decodeAll("checkpoints", args[1], args[2], true, Long.MAX_VALUE, r -> {
            Checkpoint c = Checkpoint.deserializeRecord(r);
            String line = c.consumerGroupId() + " " + c.topicPartition().topic() + " " + c.topicPartition().partition()
                + " " + c.upstreamOffset() + " " + c.downstreamOffset() + " " + c.metadata();
            // key: group, topic (STRING: 2-byte length), partition (INT32);
            // value: version header (INT16), upstream, downstream (INT64),
            // metadata (STRING).
            int keyLen = 2 + utf8Length(c.consumerGroupId()) + 2 + utf8Length(c.topicPartition().topic()) + 4;
            int valueLen = 2 + 8 + 8 + 2 + utf8Length(c.metadata());
            if (r.key().length != keyLen || r.value().length != valueLen) {
                throw new Trailing(line, r.key().length, keyLen, r.value().length, valueLen);
            }
            return line;
        });
    }

    private static int offsetSyncs(String[] args) {
        if (args.length != 3) {
            usage();
        }
        return decodeAll("offset-syncs", args[1], args[2], true, Long.MAX_VALUE, r -> {
            OffsetSync o = OffsetSync.deserializeRecord(r);
            String line = o.topicPartition().topic() + " " + o.topicPartition().partition() + " "
                + o.upstreamOffset() + " " + o.downstreamOffset();
            // key: topic (STRING), partition (INT32); value: two INT64, no header.
            int keyLen = 2 + utf8Length(o.topicPartition().topic()) + 4;
            if (r.key().length != keyLen || r.value().length != 16) {
                throw new Trailing(line, r.key().length, keyLen, r.value().length, 16);
            }
            return line;
        });
    }
}
