package dev.iobound.quarkus;

import dev.iobound.common.Contract;
import dev.iobound.common.Corpus;
import dev.iobound.common.Database;
import dev.iobound.common.Downstream;
import dev.iobound.common.FanOut;
import io.quarkus.arc.properties.UnlessBuildProperty;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import javax.sql.DataSource;
import org.eclipse.microprofile.rest.client.inject.RestClient;

/**
 * The blocking handlers of quarkus-worker and quarkus-virtual, word for word the same: only the
 * thread they run on differs (WorkerResource: @Blocking, a worker-pool thread;
 * VirtualResource: @RunOnVirtualThread, a new virtual thread). Thread.sleep, a blocking file read,
 * the REST client's blocking call and JDBC through Agroal.
 */
@ApplicationScoped
@UnlessBuildProperty(name = "iobound.model", stringValue = "reactive")
public class BlockingWork {
  private final Corpus corpus = Corpus.fromEnvironment();
  private final long timeoutMs = Downstream.fromEnvironment().timeout().toMillis();

  /**
   * quarkus-worker's fan-out calls (--fanout-threads, 64 by default); its threads start on first
   * use, so quarkus-virtual, which does not use it, has none.
   */
  private final ExecutorService fanoutPool =
      Executors.newFixedThreadPool(Integer.getInteger("iobound.fanout-threads", 64));

  @Inject DataSource pool;

  @Inject @RestClient DownstreamClient downstream;

  Response delay(String ms) throws InterruptedException {
    long wait = Contract.delayMs(ms);
    Thread.sleep(wait);
    return Replies.text(200, Long.toString(wait));
  }

  Response hash(String id, String delayMs) throws InterruptedException, IOException {
    int file = Contract.hashId(id, corpus.files());
    Thread.sleep(Contract.hashDelayMs(delayMs));
    return Replies.text(200, corpus.hash(file));
  }

  Response enrich(String key) {
    String k = Contract.enrichKey(key);
    try {
      return Replies.enriched(k, downstream.value(k), null, timeoutMs);
    } catch (RuntimeException e) {
      return Replies.enriched(k, null, e, timeoutMs);
    }
  }

  /**
   * quarkus-worker's fan-out: CompletableFuture over a bounded pool of its own, shared by all
   * requests (not Quarkus's worker pool, whose threads the waiting requests hold); a failure is
   * answered at once and the calls still running finish on the pool.
   */
  Response aggregateOnPool(String keys) throws InterruptedException {
    return aggregate(keys, k -> FanOut.onPool(k, fanoutPool, this::value));
  }

  /**
   * quarkus-virtual's fan-out: an executor of virtual threads per request; when one call fails the
   * others' threads are interrupted and stop waiting, but their requests, which the REST client
   * runs on Vert.x's HTTP client, go on to the end.
   */
  Response aggregatePerRequest(String keys) throws InterruptedException {
    return aggregate(keys, k -> FanOut.perRequest(k, this::value));
  }

  private interface Fan {
    List<String> call(List<String> keys) throws FanOut.Failed, InterruptedException;
  }

  private Response aggregate(String keys, Fan fan) throws InterruptedException {
    List<String> checked = Contract.aggregateKeys(keys);
    try {
      return Replies.json(200, fan.call(checked));
    } catch (FanOut.Failed e) {
      return Replies.downstreamFailed(e.getCause(), timeoutMs);
    }
  }

  /** The downstream's value for a checked key: the REST client's blocking call. */
  private String value(String key) throws Downstream.StatusException {
    return Replies.value(downstream.value(key));
  }

  Response list(String limit) throws SQLException {
    int n = Contract.messageLimit(limit);
    List<Map<String, Object>> out = new ArrayList<>();
    try (Connection c = pool.getConnection();
        PreparedStatement st = c.prepareStatement(Database.jdbc(Database.LIST))) {
      st.setInt(1, n);
      try (ResultSet rs = st.executeQuery()) {
        while (rs.next()) {
          out.add(Replies.message(rs.getLong(1), rs.getString(2)));
        }
      }
    }
    return Replies.json(200, out);
  }

  Response create(String body) throws SQLException {
    String text = Replies.text(body);
    return Replies.answer(201, one(Database.CREATE, st -> st.setString(1, text)));
  }

  Response get(String id) throws SQLException {
    long n = Contract.messageId(id);
    return Replies.answer(200, one(Database.GET, st -> st.setLong(1, n)));
  }

  Response update(String id, String body) throws SQLException {
    long n = Contract.messageId(id);
    String text = Replies.text(body);
    return Replies.answer(
        200,
        one(
            Database.UPDATE,
            st -> {
              st.setString(1, text);
              st.setLong(2, n);
            }));
  }

  Response delete(String id) throws SQLException {
    long n = Contract.messageId(id);
    try (Connection c = pool.getConnection();
        PreparedStatement st = c.prepareStatement(Database.jdbc(Database.DELETE))) {
      st.setLong(1, n);
      return Replies.deleted(st.executeUpdate() > 0);
    }
  }

  private interface Binder {
    void bind(PreparedStatement st) throws SQLException;
  }

  private Map<String, Object> one(String sql, Binder binder) throws SQLException {
    try (Connection c = pool.getConnection();
        PreparedStatement st = c.prepareStatement(Database.jdbc(sql))) {
      binder.bind(st);
      try (ResultSet rs = st.executeQuery()) {
        return rs.next() ? Replies.message(rs.getLong(1), rs.getString(2)) : null;
      }
    }
  }
}
