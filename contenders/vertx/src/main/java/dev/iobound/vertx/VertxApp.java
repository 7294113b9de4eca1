package dev.iobound.vertx;

import dev.iobound.common.Args;
import dev.iobound.common.BadRequest;
import dev.iobound.common.Contract;
import dev.iobound.common.Corpus;
import dev.iobound.common.Downstream;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import java.util.concurrent.TimeoutException;

/**
 * Event loop on Vert.x 5: one verticle instance per event loop, all sharing the port; waiting is
 * a Vert.x timer, files are read with Vert.x's asynchronous file system (it uses its worker pool)
 * and hashed on the event loop, and the downstream call is a non-blocking WebClient request.
 */
public final class VertxApp extends VerticleBase {
    private final int port;
    private final Corpus corpus = Corpus.fromEnvironment();
    private final Downstream downstream = Downstream.fromEnvironment();
    private WebClient client;

    VertxApp(int port) {
        this.port = port;
    }

    @Override
    public Future<?> start() {
        Router router = Router.router(vertx);
        router.get("/plaintext").handler(ctx -> text(ctx.response(), 200, Contract.PLAINTEXT));
        router.get("/delay").handler(ctx -> {
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
        client = WebClient.create(vertx, new WebClientOptions().setKeepAlive(true)
                .setConnectTimeout((int) downstream.timeout().toMillis()), new PoolOptions().setHttp1MaxSize(500));
        router.get("/enrich").handler(this::enrich);
        HttpServerOptions options = new HttpServerOptions().setHost("127.0.0.1").setPort(port).setAcceptBacklog(4096);
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
        Runnable read = () -> vertx.fileSystem().readFile(corpus.file(id).toString()).onComplete(ar -> {
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
        client.getAbs(downstream.valueUri(key).toString()).timeout(downstream.timeout().toMillis()).send().onComplete(ar -> {
            if (ar.succeeded() && ar.result().statusCode() / 100 == 2) {
                text(ctx.response(), 200, Downstream.enriched(key, ar.result().bodyAsString()));
            } else if (ar.succeeded()) {
                text(ctx.response(), 502, "downstream answered " + ar.result().statusCode());
            } else if (ar.cause() instanceof TimeoutException) {
                text(ctx.response(), 504, "downstream did not answer within " + downstream.timeout().toMillis() + " ms");
            } else {
                text(ctx.response(), 502, "downstream failed: " + ar.cause().getMessage());
            }
        });
    }

    private static void text(HttpServerResponse response, int status, String body) {
        response.setStatusCode(status).putHeader("content-type", "text/plain;charset=utf-8").end(body);
    }

    public static void main(String[] argv) throws Exception {
        Args args = new Args(argv);
        int port = args.getInt("port", 8080);
        // "auto": one per CPU this process may run on (the JVM honours the harness's pinning).
        int loops = "auto".equals(args.get("event-loops", "auto"))
                ? Runtime.getRuntime().availableProcessors()
                : args.getInt("event-loops", 1);
        Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(loops));
        vertx.deployVerticle(() -> new VertxApp(port), new DeploymentOptions().setInstances(loops))
                .toCompletionStage()
                .toCompletableFuture()
                .get();
        System.out.println("Vert.x started on 127.0.0.1:" + port + " with " + loops + " event loop(s)");
    }
}
