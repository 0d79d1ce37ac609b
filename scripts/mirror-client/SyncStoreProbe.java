// Runs Kafka's own MM2 offset translation, connect-mirror's OffsetSyncStore
// (reference §4.2), over an offset-syncs topic, so that tests can ask what
// Java MM2's checkpoint connector would make of the syncs mirror-maker
// writes. OffsetSyncStore and the MirrorCheckpointConfig methods it reads
// are package-private, hence this class's package. MirrorClientProbe's
// "syncstore" command calls run(); scripts/mirror-client/run compiles both
// files together.
//
//   syncstore BOOTSTRAP SYNCS_TOPIC [--must-read-to-end] [GROUP TOPIC PARTITION UPSTREAM]...
//       SYNCS_TOPIC (mm2-offset-syncs.<ALIAS>.internal) on the cluster at
//       BOOTSTRAP, read by an OffsetSyncStore built as MirrorCheckpointTask
//       builds it: new OffsetSyncStore(MirrorCheckpointConfig) with
//       offset-syncs.topic.location=source, target.cluster.alias=ALIAS (which
//       names that topic), both clusters' bootstrap.servers=BOOTSTRAP, then
//       start(false), which returns once the topic is read to its end, as a
//       task does when its checkpoints topic loaded (every sync kept, thinned
//       out by Java's own rules). --must-read-to-end calls start(true)
//       instead, as a task does when its checkpoints did not load: the
//       initial read keeps only the last sync per partition. Then, for each
//       position, translateDownstream(GROUP, TOPIC-PARTITION, UPSTREAM), where
//       TOPIC is the source topic as the syncs name it; one line each, in
//       the order asked: "GROUP TOPIC PARTITION UPSTREAM -> DOWNSTREAM",
//       DOWNSTREAM being what Java returns (-1 when every sync kept is past
//       UPSTREAM, and the checkpoint task then emits nothing) or "none"
//       (no sync for the partition). Exit 1 when SYNCS_TOPIC is not there
//       (it is never created), 2 on usage.

package org.apache.kafka.connect.mirror;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public final class SyncStoreProbe {
    private static final String PREFIX = "mm2-offset-syncs.";
    private static final String SUFFIX = ".internal";

    private SyncStoreProbe() {
    }

    private static int usage() {
        System.err.println(
            "usage: run syncstore BOOTSTRAP SYNCS_TOPIC [--must-read-to-end] [GROUP TOPIC PARTITION UPSTREAM]...");
        return 2;
    }

    /** args[0] is "syncstore". Returns the exit status. */
    public static int run(String[] args) throws Exception {
        boolean mustReadToEnd = false;
        List<String> positional = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            if (args[i].equals("--must-read-to-end")) {
                mustReadToEnd = true;
            } else {
                positional.add(args[i]);
            }
        }
        if (positional.size() < 2 || (positional.size() - 2) % 4 != 0) {
            return usage();
        }
        String bootstrap = positional.get(0);
        String syncsTopic = positional.get(1);
        if (!syncsTopic.startsWith(PREFIX) || !syncsTopic.endsWith(SUFFIX)
                || syncsTopic.length() <= PREFIX.length() + SUFFIX.length()) {
            System.err.println("syncstore: " + syncsTopic + " is not named mm2-offset-syncs.<ALIAS>.internal");
            return 2;
        }
        String alias = syncsTopic.substring(PREFIX.length(), syncsTopic.length() - SUFFIX.length());
        List<TopicPartition> tps = new ArrayList<>();
        List<Long> upstreams = new ArrayList<>();
        for (int i = 2; i < positional.size(); i += 4) {
            try {
                tps.add(new TopicPartition(positional.get(i + 1), Integer.parseInt(positional.get(i + 2))));
                upstreams.add(Long.parseLong(positional.get(i + 3)));
            } catch (NumberFormatException e) {
                System.err.println("syncstore: PARTITION and UPSTREAM must be numbers: " + positional.subList(i, i + 4));
                return 2;
            }
        }

        // The store's KafkaBasedLog waits for a topic that is not there (and
        // the test clusters auto-create topics): look first, creating nothing.
        Map<String, Object> consumerProps = new HashMap<>();
        consumerProps.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        consumerProps.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        consumerProps.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        consumerProps.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, "false");
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProps)) {
            if (!consumer.listTopics(Duration.ofSeconds(30)).containsKey(syncsTopic)) {
                System.err.println("syncstore: no topic " + syncsTopic + " on " + bootstrap);
                return 1;
            }
        }

        // What MirrorCheckpointTask's config holds, as far as the store reads
        // it: which cluster has the syncs topic, and the aliases naming it.
        // The source alias only has to differ from the target's.
        Map<String, String> props = new HashMap<>();
        // Required by every connector config: as MirrorMaker's driver names
        // the checkpoint connector.
        props.put("name", MirrorCheckpointConnector.class.getSimpleName());
        props.put("connector.class", MirrorCheckpointConnector.class.getName());
        props.put(MirrorConnectorConfig.SOURCE_CLUSTER_ALIAS, "upstream-of-" + alias);
        props.put(MirrorConnectorConfig.TARGET_CLUSTER_ALIAS, alias);
        props.put("source.cluster.bootstrap.servers", bootstrap);
        props.put("target.cluster.bootstrap.servers", bootstrap);
        props.put(MirrorConnectorConfig.OFFSET_SYNCS_TOPIC_LOCATION, "source");
        MirrorCheckpointConfig config = new MirrorCheckpointConfig(props);
        if (!config.offsetSyncsTopic().equals(syncsTopic)) {
            System.err.println("syncstore: the config names " + config.offsetSyncsTopic() + ", not " + syncsTopic);
            return 1;
        }

        try (OffsetSyncStore store = new OffsetSyncStore(config)) {
            store.start(mustReadToEnd);
            for (int i = 0; i < tps.size(); i++) {
                TopicPartition tp = tps.get(i);
                String group = positional.get(2 + 4 * i);
                OptionalLong down = store.translateDownstream(group, tp, upstreams.get(i));
                System.out.println(group + " " + tp.topic() + " " + tp.partition() + " " + upstreams.get(i) + " -> "
                    + (down.isPresent() ? Long.toString(down.getAsLong()) : "none"));
            }
        }
        return 0;
    }
}
