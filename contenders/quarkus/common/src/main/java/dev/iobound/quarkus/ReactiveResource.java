package dev.iobound.quarkus;

import dev.iobound.common.Contract;
import dev.iobound.common.Corpus;
import dev.iobound.common.Database;
import dev.iobound.common.Downstream;
import io.quarkus.arc.properties.IfBuildProperty;
import io.smallrye.common.annotation.NonBlocking;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.Response;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.rest.client.inject.RestClient;
import org.jboss.resteasy.reactive.RestPath;
import org.jboss.resteasy.reactive.RestQuery;

/**
 * quarkus-reactive: every handler returns a Uni, so Quarkus REST runs it on the Vert.x event loop
 * that read the request (@NonBlocking: /plaintext too), and nothing may block: timers for the
 * waits, Vert.x's asynchronous file system, the REST client's non-blocking call, the reactive
 * PostgreSQL client.
 */
@Path("/")
@NonBlocking
@IfBuildProperty(name = "iobound.model", stringValue = "reactive")
public class ReactiveResource {
  private final Corpus corpus = Corpus.fromEnvironment();
  private final long timeoutMs = Downstream.fromEnvironment().timeout().toMillis();

  @Inject Vertx vertx;

  @Inject Pool pool;

  @Inject @RestClient DownstreamClient downstream;

  @GET
  @Path("plaintext")
  public Response plaintext() {
    return Replies.text(200, Contract.PLAINTEXT);
  }

  @GET
  @Path("delay")
  public Uni<Response> delay(@RestQuery String ms) {
    long wait = Contract.delayMs(ms);
    return after(wait).map(x -> Replies.text(200, Long.toString(wait)));
  }

  @GET
  @Path("hash")
  public Uni<Response> hash(@RestQuery String id, @RestQuery String delayMs) {
    int file = Contract.hashId(id, corpus.files());
    long wait = Contract.hashDelayMs(delayMs);
    return after(wait)
        .chain(x -> vertx.fileSystem().readFile(corpus.file(file).toString()))
        .map(buffer -> Replies.text(200, Corpus.sha512Hex(buffer.getBytes())));
  }

  @GET
  @Path("enrich")
  public Uni<Response> enrich(@RestQuery String key) {
    String k = Contract.enrichKey(key);
    return downstream
        .valueAsync(k)
        .onItemOrFailure()
        .transform((r, failure) -> Replies.enriched(k, r, failure, timeoutMs));
  }

  /**
   * The fan-out: Uni.combine().all() over one non-blocking REST client call per key, subscribed to
   * at once on this event loop; the first failure fails the combination and cancels the other
   * calls' subscriptions.
   */
  @GET
  @Path("aggregate")
  public Uni<Response> aggregate(@RestQuery String keys) {
    List<Uni<String>> calls =
        Contract.aggregateKeys(keys).stream()
            .map(k -> downstream.valueAsync(k).flatMap(ReactiveResource::body))
            .toList();
    return Uni.combine()
        .all()
        .unis(calls)
        .with(String.class, values -> Replies.json(200, values))
        .onFailure()
        .recoverWithItem(e -> Replies.downstreamFailed(e, timeoutMs));
  }

  /** The downstream's body, or a failure for an answer that is not 2xx. */
  private static Uni<String> body(Response r) {
    try {
      return Uni.createFrom().item(Replies.value(r));
    } catch (Downstream.StatusException e) {
      return Uni.createFrom().failure(e);
    }
  }

  @GET
  @Path("messages")
  public Uni<Response> list(@RestQuery String limit) {
    int n = Contract.messageLimit(limit);
    return pool.preparedQuery(Database.LIST)
        .execute(Tuple.of(n))
        .map(
            rows -> {
              List<Map<String, Object>> out = new ArrayList<>();
              for (Row row : rows) {
                out.add(Replies.message(row.getLong(0), row.getString(1)));
              }
              return Replies.json(200, out);
            });
  }

  @POST
  @Path("messages")
  public Uni<Response> create(String body) {
    String text = Replies.text(body);
    return one(Database.CREATE, Tuple.of(text)).map(m -> Replies.answer(201, m));
  }

  @GET
  @Path("messages/{id}")
  public Uni<Response> get(@RestPath String id) {
    return one(Database.GET, Tuple.of(Contract.messageId(id))).map(m -> Replies.answer(200, m));
  }

  @PUT
  @Path("messages/{id}")
  public Uni<Response> update(@RestPath String id, String body) {
    long n = Contract.messageId(id);
    String text = Replies.text(body);
    return one(Database.UPDATE, Tuple.of(text, n)).map(m -> Replies.answer(200, m));
  }

  @DELETE
  @Path("messages/{id}")
  public Uni<Response> delete(@RestPath String id) {
    return pool.preparedQuery(Database.DELETE)
        .execute(Tuple.of(Contract.messageId(id)))
        .map(rows -> Replies.deleted(rows.rowCount() > 0));
  }

  /** A Vert.x timer on this event loop (none for 0: Vert.x timers take at least 1 ms). */
  private Uni<Long> after(long ms) {
    if (ms == 0) {
      return Uni.createFrom().item(0L);
    }
    return Uni.createFrom().emitter(em -> vertx.setTimer(ms, id -> em.complete(ms)));
  }

  private Uni<Map<String, Object>> one(String sql, Tuple args) {
    return pool.preparedQuery(sql).execute(args).map(ReactiveResource::first);
  }

  private static Map<String, Object> first(RowSet<Row> rows) {
    var it = rows.iterator();
    if (!it.hasNext()) {
      return null;
    }
    Row row = it.next();
    return Replies.message(row.getLong(0), row.getString(1));
  }
}
