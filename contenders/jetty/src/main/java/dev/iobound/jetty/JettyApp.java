package dev.iobound.jetty;

import dev.iobound.common.Args;
import dev.iobound.common.BadRequest;
import dev.iobound.common.Contract;
import java.util.concurrent.Executors;
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

    @Override
    public boolean handle(Request request, Response response, Callback callback) throws Exception {
        switch (Request.getPathInContext(request)) {
            case "/plaintext" -> send(response, callback, 200, Contract.PLAINTEXT);
            case "/delay" -> {
                long ms;
                try {
                    ms = Contract.delayMs(Request.extractQueryParameters(request).getValue("ms"));
                } catch (BadRequest e) {
                    send(response, callback, 400, e.getMessage());
                    return true;
                }
                Thread.sleep(ms); // blocks this request's thread: the model under test
                send(response, callback, 200, Long.toString(ms));
            }
            default -> send(response, callback, 404, "not found");
        }
        return true;
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
