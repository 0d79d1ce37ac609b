// Every key Kafka's own config definitions know, for tests/every_key.rs
// (issue #30 item 6, "no key ignored without a word"): the test writes each
// key into an MM2 or MM1 file and checks that mirror-maker either honours it
// (lists it with its file:line in --check-config) or says by name why not.
// Taking the names from the jars, not from a copied list, is the point: a
// key Java knows and this project forgot cannot hide.
//
// Usage:
//   scripts/kafka-run scripts/lib/ConfigKeys.java
//
// Prints one line per key, tab-separated:
//   DEF  KEY  TYPE  DEFAULT
// DEF is where the key comes from: mm2 (MirrorMakerConfig's own ConfigDef),
// source / checkpoint / heartbeat (the connectors' CONNECTOR_CONFIG_DEF),
// consumer / producer / admin (the clients' configDef()), worker (Connect's
// DistributedConfig, which MM2 dedicated mode builds per target cluster).
// TYPE is the ConfigDef type (BOOLEAN, INT, SHORT, LONG, DOUBLE, STRING,
// LIST, CLASS, PASSWORD); DEFAULT is Java's default as the file would spell
// it, or the single character '-' when the key has none. Tabs and newlines
// in a default are replaced by spaces (none of 3.9's has any).

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.Map;

import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.ConfigDef;

public class ConfigKeys {
    public static void main(String[] args) throws Exception {
        print("mm2", staticMethod("org.apache.kafka.connect.mirror.MirrorMakerConfig", "config"));
        print("source", staticField("org.apache.kafka.connect.mirror.MirrorSourceConfig", "CONNECTOR_CONFIG_DEF"));
        print("checkpoint", staticField("org.apache.kafka.connect.mirror.MirrorCheckpointConfig", "CONNECTOR_CONFIG_DEF"));
        print("heartbeat", staticField("org.apache.kafka.connect.mirror.MirrorHeartbeatConfig", "CONNECTOR_CONFIG_DEF"));
        print("consumer", ConsumerConfig.configDef());
        print("producer", ProducerConfig.configDef());
        print("admin", AdminClientConfig.configDef());
        // DistributedConfig keeps its ConfigDef behind a private builder that takes the JVM's crypto provider.
        Class<?> crypto = Class.forName("org.apache.kafka.connect.runtime.distributed.Crypto");
        Object system = crypto.getField("SYSTEM").get(null);
        Method config = Class.forName("org.apache.kafka.connect.runtime.distributed.DistributedConfig").getDeclaredMethod("config", crypto);
        config.setAccessible(true);
        print("worker", (ConfigDef) config.invoke(null, system));
    }

    private static ConfigDef staticMethod(String cls, String name) throws Exception {
        Method m = Class.forName(cls).getDeclaredMethod(name);
        m.setAccessible(true);
        return (ConfigDef) m.invoke(null);
    }

    private static ConfigDef staticField(String cls, String name) throws Exception {
        Field f = Class.forName(cls).getDeclaredField(name);
        f.setAccessible(true);
        return (ConfigDef) f.get(null);
    }

    private static void print(String def, ConfigDef cd) {
        for (Map.Entry<String, ConfigDef.ConfigKey> e : cd.configKeys().entrySet()) {
            ConfigDef.ConfigKey k = e.getValue();
            String dflt = "-";
            if (k.hasDefault() && k.defaultValue != null) {
                dflt = ConfigDef.convertToString(k.defaultValue, k.type).replaceAll("[\t\n\r]", " ");
            }
            System.out.println(def + "\t" + e.getKey() + "\t" + k.type + "\t" + dflt);
        }
    }
}
