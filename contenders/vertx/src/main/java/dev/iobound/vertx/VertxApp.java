package dev.iobound.vertx;

import dev.iobound.common.Args;
import dev.iobound.common.BadRequest;
import dev.iobound.common.Contract;
import dev.iobound.common.Corpus;
import dev.iobound.common.Database;
import dev.iobound.common.Downstream;
import dev.iobound.common.RuntimeReport;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import io.vertx.ext.web.handler.BodyHandler;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.Tuple;
import java.util.List;
import java.util.concurrent.TimeoutException;

/**
 * Event loop on Vert.x 5: one verticle instance per event loop, all sharing the port; waiting is a
 * Vert.x timer, files are read with Vert.x's asynchronous file system (it uses its worker pool) and
 * hashed on the event loop, and the downstream call is a non-blocking WebClient request.
 */
public final class VertxApp extends VerticleBase {
  private final String address;
  private final int port;

  /** /messages: one pool of IOBOUND_DB_POOL connections shared by every event loop. */
  private final Pool pool;

  private final Corpus corpus = Corpus.fromEnvironment();
  private final Downstream downstream = Downstream.fromEnvironment();
  private WebClient client;

  VertxApp(String address, int port, Pool pool) {
    this.address = address;
    this.port = port;
    this.pool = pool;
  }

  @Override
  public Future<?> start() {
    Router router = Router.router(vertx);
    router.get("/plaintext").handler(ctx -> text(ctx.response(), 200, Contract.PLAINTEXT));
    router
        .get("/delay")
        .handler(
            ctx -> {
              long ms;
              try {
                ms = Contract.delayMs(ctx.queryParams().get("ms"));
              } catch (BadRequest e) {
                text(ctx.response(), 400, e.getMessage());
                return;
              }
              if (ms == 0) {
                text(ctx.response(), 200, "0"); // Vert.x timers need at least 1 ms
              } else {
                vertx.setTimer(ms, id -> text(ctx.response(), 200, Long.toString(ms)));
              }
            });
    router.get("/hash").handler(this::hash);
    // One keep-alive pool per event loop; 500 connections, as many as Tomcat's threads could use.
    client =
        WebClient.create(
            vertx,
            new WebClientOptions()
                .setKeepAlive(true)
                .setConnectTimeout((int) downstream.timeout().toMillis()),
            new PoolOptions().setHttp1MaxSize(500));
    router.get("/enrich").handler(this::enrich);
    router.get("/aggregate").handler(this::aggregate);
    // Bodies over 64 KiB get 413 from the BodyHandler before any handler runs.
    router.route("/messages*").handler(BodyHandler.create().setBodyLimit(Contract.MAX_BODY_BYTES));
    router.get("/messages").handler(this::listMessages);
    router.post("/messages").handler(ctx -> onMessage(ctx, Database.CREATE, 201, null));
    router
        .get("/messages/:id")
        .handler(ctx -> onMessage(ctx, Database.GET, 200, ctx.pathParam("id")));
    router
        .put("/messages/:id")
        .handler(ctx -> onMessage(ctx, Database.UPDATE, 200, ctx.pathParam("id")));
    router.delete("/messages/:id").handler(this::deleteMessage);
    HttpServerOptions options =
        new HttpServerOptions().setHost(address).setPort(port).setAcceptBacklog(4096);
    return vertx.createHttpServer(options).requestHandler(router).listen();
  }

  private void hash(RoutingContext ctx) {
    int id;
    long wait;
    try {
      id = Contract.hashId(ctx.queryParams().get("id"), corpus.files());
      wait = Contract.hashDelayMs(ctx.queryParams().get("delayMs"));
    } catch (BadRequest e) {
      text(ctx.response(), 400, e.getMessage());
      return;
    }
    Runnable read =
        () ->
            vertx
                .fileSystem()
                .readFile(corpus.file(id).toString())
                .onComplete(
                    ar -> {
                      if (ar.succeeded()) {
                        text(ctx.response(), 200, Corpus.sha512Hex(ar.result().getBytes()));
                      } else {
                        text(ctx.response(), 500, "cannot read file " + id);
                      }
                    });
    if (wait == 0) {
      read.run();
    } else {
      vertx.setTimer(wait, t -> read.run());
    }
  }

  private void enrich(RoutingContext ctx) {
    String key;
    try {
      key = Contract.enrichKey(ctx.queryParams().get("key"));
    } catch (BadRequest e) {
      text(ctx.response(), 400, e.getMessage());
      return;
    }
    value(key)
        .onComplete(
            ar -> {
              if (ar.succeeded()) {
                text(ctx.response(), 200, Downstream.enriched(key, ar.result()));
              } else {
                downstreamFailed(ctx, ar.cause());
              }
            });
  }

  /**
   * The fan-out: Future.all over one WebClient call per key, all sent at once from this event loop.
   * It fails as soon as one call fails; the others are not cancelled (a WebClient request has no
   * cancel), their answers arrive and are dropped.
   */
  private void aggregate(RoutingContext ctx) {
    List<String> keys;
    try {
      keys = Contract.aggregateKeys(ctx.queryParams().get("keys"));
    } catch (BadRequest e) {
      text(ctx.response(), 400, e.getMessage());
      return;
    }
    List<Future<String>> calls = keys.stream().map(this::value).toList();
    Future.all(calls)
        .onComplete(
            ar -> {
              if (ar.succeeded()) {
                JsonArray values = new JsonArray();
                calls.forEach(c -> values.add(c.result()));
                json(ctx.response(), 200, values.encode());
              } else {
                downstreamFailed(ctx, ar.cause());
              }
            });
  }

  /** The downstream's value for a checked key; a non-2xx answer fails the future. */
  private Future<String> value(String key) {
    return client
        .getAbs(downstream.valueUri(key).toString())
        .timeout(downstream.timeout().toMillis())
        .send()
        .compose(
            r ->
                r.statusCode() / 100 == 2
                    ? Future.succeededFuture(r.bodyAsString())
                    : Future.failedFuture(new Downstream.StatusException(r.statusCode())));
  }

  /** 504 for a call that passed the timeout, 502 for any other failure. */
  private void downstreamFailed(RoutingContext ctx, Throwable e) {
    if (e instanceof TimeoutException) {
      text(ctx.response(), 504, downstream.timedOutText());
    } else if (e instanceof Downstream.StatusException) {
      text(ctx.response(), 502, e.getMessage());
    } else {
      text(ctx.response(), 502, Downstream.failedText(e.getMessage()));
    }
  }

  private void listMessages(RoutingContext ctx) {
    long limit;
    try {
      limit = Contract.messageLimit(ctx.queryParams().get("limit"));
    } catch (BadRequest e) {
      text(ctx.response(), 400, e.getMessage());
      return;
    }
    pool.preparedQuery(Database.LIST)
        .execute(Tuple.of(limit))
        .onComplete(
            ar -> {
              if (ar.failed()) {
                text(ctx.response(), 500, "database error: " + ar.cause().getMessage());
                return;
              }
              JsonArray rows = new JsonArray();
              for (Row r : ar.result()) {
                rows.add(message(r));
              }
              json(ctx.response(), 200, rows.encode());
            });
  }

  /** GET, POST and PUT: a statement that returns at most one message. */
  private void onMessage(RoutingContext ctx, String sql, int status, String rawId) {
    Tuple args;
    try {
      Long id = rawId == null ? null : Contract.messageId(rawId);
      if (sql.equals(Database.GET)) {
        args = Tuple.of(id);
      } else {
        String text = text(ctx.body().buffer());
        args = id == null ? Tuple.of(text) : Tuple.of(text, id);
      }
    } catch (BadRequest e) {
      text(ctx.response(), 400, e.getMessage());
      return;
    }
    pool.preparedQuery(sql).execute(args).onComplete(ar -> answer(ctx, status, ar));
  }

  private void deleteMessage(RoutingContext ctx) {
    long id;
    try {
      id = Contract.messageId(ctx.pathParam("id"));
    } catch (BadRequest e) {
      text(ctx.response(), 400, e.getMessage());
      return;
    }
    pool.preparedQuery(Database.DELETE)
        .execute(Tuple.of(id))
        .onComplete(
            ar -> {
              if (ar.failed()) {
                text(ctx.response(), 500, "database error: " + ar.cause().getMessage());
              } else if (ar.result().rowCount() == 0) {
                text(ctx.response(), 404, "no such message");
              } else {
                ctx.response().setStatusCode(204).end();
              }
            });
  }

  private static void answer(
      RoutingContext ctx, int status, io.vertx.core.AsyncResult<RowSet<Row>> ar) {
    if (ar.failed()) {
      text(ctx.response(), 500, "database error: " + ar.cause().getMessage());
    } else if (ar.result().size() == 0) {
      text(ctx.response(), 404, "no such message");
    } else {
      json(ctx.response(), status, message(ar.result().iterator().next()).encode());
    }
  }

  /** The validated text of a create/update body, parsed with Vert.x's JSON. */
  private static String text(Buffer body) {
    Object parsed;
    try {
      parsed = body == null ? null : Json.decodeValue(body);
    } catch (RuntimeException e) {
      throw new BadRequest("body is not valid JSON");
    }
    if (!(parsed instanceof JsonObject o)) {
      throw new BadRequest("body must be a JSON object with \"text\"");
    }
    return Contract.messageText(o.getValue("text"));
  }

  private static JsonObject message(Row r) {
    return new JsonObject().put("id", r.getLong(0)).put("text", r.getString(1));
  }

  private static void json(HttpServerResponse response, int status, String body) {
    response.setStatusCode(status).putHeader("content-type", "application/json").end(body);
  }

  private static void text(HttpServerResponse response, int status, String body) {
    response.setStatusCode(status).putHeader("content-type", "text/plain;charset=utf-8").end(body);
  }

  public static void main(String[] argv) throws Exception {
    Args args = new Args(argv);
    int port = args.getInt("port", 8080);
    // "auto": Vert.x's own default, two per CPU this process may run on (the JVM honours
    // the harness's pinning).
    int loops =
        "auto".equals(args.get("event-loops", "auto"))
            ? VertxOptions.DEFAULT_EVENT_LOOP_POOL_SIZE
            : args.getInt("event-loops", 1);
    Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(loops));
    Database db = Database.fromEnvironment();
    PgConnectOptions connect =
        new PgConnectOptions()
            .setHost(db.host())
            .setPort(db.port())
            .setDatabase(db.name())
            .setUser(db.user())
            .setPassword(db.password())
            .setCachePreparedStatements(true);
    Pool pool =
        PgBuilder.pool()
            .with(new io.vertx.sqlclient.PoolOptions().setMaxSize(db.pool()))
            .connectingTo(connect)
            .using(vertx)
            .build();
    vertx
        .deployVerticle(
            () -> new VertxApp(args.address(), port, pool),
            new DeploymentOptions().setInstances(loops))
        .toCompletionStage()
        .toCompletableFuture()
        .get();
    System.out.println(
        "Vert.x started on " + args.address() + ":" + port + " with " + loops + " event loop(s)");
    new RuntimeReport("event loops (Vert.x, a verticle instance on each)", loops)
        .with("worker_pool", VertxOptions.DEFAULT_WORKER_POOL_SIZE)
        .print();
  }
}
