package dev.iobound.jetty;

import dev.iobound.common.Args;
import dev.iobound.common.BadRequest;
import dev.iobound.common.Contract;
import dev.iobound.common.Corpus;
import dev.iobound.common.Downstream;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.util.concurrent.Executors;
import org.eclipse.jetty.util.Fields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * Thread-per-request on Jetty 12 (core handler API, no servlet layer). A blocking handler: each
 * request holds a pool thread while it waits. With --virtual=true Jetty runs the same blocking
 * handler on virtual threads (QueuedThreadPool#setVirtualThreadsExecutor), keeping its platform
 * threads for the selectors.
 */
public final class JettyApp extends Handler.Abstract {

    private final Corpus corpus = Corpus.fromEnvironment();
    private final Downstream downstream = Downstream.fromEnvironment();
    /** The JDK's HttpClient (keep-alive pool), called blocking from the request's thread. */
    private final HttpClient client = HttpClient.newBuilder().connectTimeout(downstream.timeout()).build();

    @Override
    public boolean handle(Request request, Response response, Callback callback) throws Exception {
        try {
            switch (Request.getPathInContext(request)) {
                case "/plaintext" -> send(response, callback, 200, Contract.PLAINTEXT);
                case "/delay" -> {
                    long ms = Contract.delayMs(query(request).getValue("ms"));
                    Thread.sleep(ms); // blocks this request's thread: the model under test
                    send(response, callback, 200, Long.toString(ms));
                }
                case "/hash" -> {
                    Fields q = query(request);
                    int id = Contract.hashId(q.getValue("id"), corpus.files());
                    Thread.sleep(Contract.hashDelayMs(q.getValue("delayMs")));
                    send(response, callback, 200, corpus.hash(id)); // blocking read on this thread
                }
                case "/enrich" -> enrich(Contract.enrichKey(query(request).getValue("key")), response, callback);
                default -> send(response, callback, 404, "not found");
            }
        } catch (BadRequest e) {
            send(response, callback, 400, e.getMessage());
        }
        return true;
    }

    private void enrich(String key, Response response, Callback callback) throws InterruptedException {
        HttpRequest req = HttpRequest.newBuilder(downstream.valueUri(key)).timeout(downstream.timeout()).GET().build();
        try {
            HttpResponse<String> r = client.send(req, HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() / 100 == 2) {
                send(response, callback, 200, Downstream.enriched(key, r.body()));
            } else {
                send(response, callback, 502, "downstream answered " + r.statusCode());
            }
        } catch (HttpTimeoutException e) {
            send(response, callback, 504, "downstream did not answer within " + downstream.timeout().toMillis() + " ms");
        } catch (IOException e) {
            send(response, callback, 502, "downstream failed: " + e.getMessage());
        }
    }

    private static Fields query(Request request) {
        return Request.extractQueryParameters(request);
    }

    private static void send(Response response, Callback callback, int status, String body) {
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain;charset=utf-8");
        Content.Sink.write(response, true, body, callback);
    }

    public static void main(String[] argv) throws Exception {
        Args args = new Args(argv);
        QueuedThreadPool pool = new QueuedThreadPool(args.getInt("threads", 200));
        pool.setName("jetty");
        if (Boolean.parseBoolean(args.get("virtual", "false"))) {
            pool.setVirtualThreadsExecutor(Executors.newVirtualThreadPerTaskExecutor());
        }
        Server server = new Server(pool);
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(args.getInt("port", 8080));
        connector.setAcceptQueueSize(args.getInt("backlog", 4096));
        server.addConnector(connector);
        server.setHandler(new JettyApp());
        server.start();
        server.join();
    }
}
