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
//
// Exit status: 0 fine, 1 a record failed to decode, 2 usage.

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.connect.mirror.Heartbeat;
import org.apache.kafka.connect.mirror.IdentityReplicationPolicy;
import org.apache.kafka.connect.mirror.MirrorClient;
import org.apache.kafka.connect.mirror.MirrorClientConfig;

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
            default:
                usage();
        }
    }

    private static void usage() {
        System.err.println("usage: run topology BOOTSTRAP [SOURCE_ALIAS] [--policy identity|default]");
        System.err.println("       run heartbeats BOOTSTRAP TOPIC N");
        System.exit(2);
    }

    private static String csv(Set<String> s) {
        return String.join(",", new TreeSet<>(s));
    }

    private static int topology(String[] args) throws Exception {
        List<String> positional = new ArrayList<>();
        String policy = "default";
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
        if (positional.isEmpty() || positional.size() > 2) {
            usage();
        }
        String bootstrap = positional.get(0);
        String sourceAlias = positional.size() > 1 ? positional.get(1) : null;

        // MirrorClient(Map) builds its MirrorClientConfig from these (that
        // constructor is package-private); the policy is configured with the
        // same map, which is where Identity reads source.cluster.alias.
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

    private static int utf8Length(String s) {
        return s.getBytes(StandardCharsets.UTF_8).length;
    }

    private static int heartbeats(String[] args) {
        if (args.length != 4) {
            usage();
        }
        String bootstrap = args[1];
        String topic = args[2];
        long max = Long.parseLong(args[3]);

        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        // Naming a topic that is not there must not create it (the test
        // clusters auto-create topics).
        props.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, "false");

        int bad = 0;
        long read = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            List<PartitionInfo> infos = consumer.partitionsFor(topic, Duration.ofSeconds(30));
            if (infos == null || infos.isEmpty()) {
                System.err.println("heartbeats: topic " + topic + " not found on " + bootstrap);
                return 1;
            }
            List<TopicPartition> parts = new ArrayList<>();
            for (PartitionInfo p : infos) {
                parts.add(new TopicPartition(topic, p.partition()));
            }
            consumer.assign(parts);
            consumer.seekToBeginning(parts);
            Map<TopicPartition, Long> end = new HashMap<>(consumer.endOffsets(parts, Duration.ofSeconds(30)));
            end.entrySet().removeIf(e -> consumer.position(e.getKey(), Duration.ofSeconds(30)) >= e.getValue());
            long deadline = System.currentTimeMillis() + 60_000;
            while (!end.isEmpty() && read < max) {
                if (System.currentTimeMillis() > deadline) {
                    System.err.println("heartbeats: could not read to the end offsets of " + end.keySet() + " within 60 s");
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
                        Heartbeat h = Heartbeat.deserializeRecord(r);
                        int keyLen = 4 + utf8Length(h.sourceClusterAlias()) + utf8Length(h.targetClusterAlias());
                        if (r.key().length != keyLen || r.value().length != 10) {
                            System.err.println("heartbeats: " + where + ": decodes, but key is " + r.key().length
                                + " bytes (schema reads " + keyLen + ") and value " + r.value().length
                                + " bytes (schema reads 10)");
                            bad++;
                        }
                        System.out.println(h.sourceClusterAlias() + " " + h.targetClusterAlias() + " " + h.timestamp());
                    } catch (RuntimeException | AssertionError e) {
                        System.err.println("heartbeats: " + where + ": does not decode: " + e);
                        bad++;
                    }
                }
            }
        }
        System.err.println("heartbeats: " + read + " records read, " + bad + " bad");
        return bad == 0 ? 0 : 1;
    }
}
