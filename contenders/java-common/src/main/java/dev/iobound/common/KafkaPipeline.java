package dev.iobound.common;

import java.util.Properties;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * What the pipeline contenders and the harness's Kafka load tool must agree on: the topics, the
 * marker of a failed enrichment, and one producer configuration (acks from every replica). Kafka's
 * client is an optional dependency of this library: only those two use this class.
 */
public final class KafkaPipeline {
  public static final String IN = "input";
  public static final String OUT = "output";

  /** Written instead of the downstream's value when the enrichment failed. */
  public static final String FAILED = "!failed";

  private KafkaPipeline() {}

  public static Properties producerProperties(String bootstrap, int lingerMs) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.LINGER_MS_CONFIG, Integer.toString(lingerMs));
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    return p;
  }
}
