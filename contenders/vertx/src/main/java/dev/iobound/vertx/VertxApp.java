package dev.iobound.vertx;

import dev.iobound.common.Args;
import dev.iobound.common.BadRequest;
import dev.iobound.common.Contract;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;

/**
 * Event loop on Vert.x 5: one verticle instance per event loop, all sharing the port; waiting is
 * a Vert.x timer, so no thread ever blocks.
 */
public final class VertxApp extends VerticleBase {
    private final int port;

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
        HttpServerOptions options = new HttpServerOptions().setHost("127.0.0.1").setPort(port).setAcceptBacklog(4096);
        return vertx.createHttpServer(options).requestHandler(router).listen();
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
