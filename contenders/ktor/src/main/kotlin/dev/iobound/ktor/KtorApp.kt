package dev.iobound.ktor

import dev.iobound.common.Args
import dev.iobound.common.BadRequest
import dev.iobound.common.Contract
import dev.iobound.common.Corpus
import dev.iobound.common.Database
import dev.iobound.common.Downstream
import dev.iobound.common.RuntimeReport
import io.ktor.client.HttpClient
import io.ktor.client.engine.cio.CIO
import io.ktor.client.network.sockets.ConnectTimeoutException
import io.ktor.client.network.sockets.SocketTimeoutException
import io.ktor.client.plugins.HttpRequestTimeoutException
import io.ktor.client.plugins.HttpTimeout
import io.ktor.client.request.get
import io.ktor.client.statement.bodyAsText
import io.ktor.http.ContentType
import io.ktor.http.HttpHeaders
import io.ktor.http.HttpStatusCode
import io.ktor.server.application.Application
import io.ktor.server.application.ApplicationCall
import io.ktor.server.application.install
import io.ktor.server.engine.connector
import io.ktor.server.engine.embeddedServer
import io.ktor.server.netty.Netty
import io.ktor.server.plugins.statuspages.StatusPages
import io.ktor.server.request.receive
import io.ktor.server.response.respond
import io.ktor.server.response.respondText
import io.ktor.server.routing.delete
import io.ktor.server.routing.get
import io.ktor.server.routing.post
import io.ktor.server.routing.put
import io.ktor.server.routing.routing
import io.netty.channel.ChannelOption
import io.vertx.core.Future
import io.vertx.core.Vertx
import io.vertx.pgclient.PgBuilder
import io.vertx.pgclient.PgConnectOptions
import io.vertx.sqlclient.Pool
import io.vertx.sqlclient.PoolOptions
import io.vertx.sqlclient.Row
import io.vertx.sqlclient.Tuple
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.future.await
import kotlinx.coroutines.withContext
import kotlinx.serialization.SerializationException
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonArray
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.put

/**
 * Ktor on Netty with Kotlin coroutines: every handler is a suspend function. Waiting suspends the
 * coroutine and frees its thread: `delay` for the waits, Ktor's CIO client for the downstream, the
 * Vert.x PostgreSQL client's futures awaited for the database; the file read goes to
 * Dispatchers.IO, the coroutine way to run blocking code on a bounded pool.
 */
class KtorApp(
    private val pool: Pool,
    private val client: HttpClient,
    private val downstream: Downstream,
) {
    private val corpus = Corpus.fromEnvironment()

    fun Application.module() {
        install(StatusPages) {
            exception<BadRequest> { call, e -> text(call, 400, e.message ?: "bad request") }
            exception<TooLarge> { call, e -> text(call, 413, e.message ?: "body too large") }
        }
        routing {
            get("/plaintext") { text(call, 200, Contract.PLAINTEXT) }
            get("/delay") {
                val ms = Contract.delayMs(call.request.queryParameters["ms"])
                delay(ms) // suspends: the thread serves other calls meanwhile
                text(call, 200, ms.toString())
            }
            get("/hash") {
                val q = call.request.queryParameters
                val id = Contract.hashId(q["id"], corpus.files())
                delay(Contract.hashDelayMs(q["delayMs"]))
                text(call, 200, withContext(Dispatchers.IO) { corpus.hash(id) })
            }
            get("/enrich") { enrich(call, Contract.enrichKey(call.request.queryParameters["key"])) }
            get("/aggregate") {
                aggregate(call, Contract.aggregateKeys(call.request.queryParameters["keys"]))
            }
            get("/messages") {
                val limit = Contract.messageLimit(call.request.queryParameters["limit"])
                val rows = pool.preparedQuery(Database.LIST).execute(Tuple.of(limit)).awaitResult()
                json(call, 200, buildJsonArray { rows.forEach { add(message(it)) } })
            }
            post("/messages") {
                val text = text(call)
                answer(call, 201, one(Database.CREATE, Tuple.of(text)))
            }
            get("/messages/{id}") {
                answer(
                    call,
                    200,
                    one(Database.GET, Tuple.of(Contract.messageId(call.parameters["id"]))),
                )
            }
            put("/messages/{id}") {
                val id = Contract.messageId(call.parameters["id"])
                val text = text(call)
                answer(call, 200, one(Database.UPDATE, Tuple.of(text, id)))
            }
            delete("/messages/{id}") {
                val id = Contract.messageId(call.parameters["id"])
                val rows = pool.preparedQuery(Database.DELETE).execute(Tuple.of(id)).awaitResult()
                if (rows.rowCount() == 0) text(call, 404, "no such message")
                else call.respond(HttpStatusCode.NoContent)
            }
        }
    }

    private suspend fun enrich(call: ApplicationCall, key: String) {
        val (status, body) =
            try {
                200 to Downstream.enriched(key, value(key))
            } catch (e: CancellationException) {
                throw e
            } catch (e: Exception) {
                downstreamFailed(e)
            }
        text(call, status, body)
    }

    /**
     * The fan-out: one `async` per key in a `coroutineScope`, awaited together. The first call to
     * fail cancels the scope, which cancels the other calls (the CIO client aborts their requests
     * and closes the connections), and its exception is the scope's.
     */
    private suspend fun aggregate(call: ApplicationCall, keys: List<String>) {
        val values =
            try {
                coroutineScope { keys.map { key -> async { value(key) } }.awaitAll() }
            } catch (e: CancellationException) {
                throw e
            } catch (e: Exception) {
                val (status, body) = downstreamFailed(e)
                return text(call, status, body)
            }
        json(call, 200, buildJsonArray { values.forEach { add(JsonPrimitive(it)) } })
    }

    /** The downstream's value for a checked key; a non-2xx answer is a StatusException. */
    private suspend fun value(key: String): String {
        val r = client.get(downstream.valueUri(key).toString())
        if (r.status.value / 100 != 2) throw Downstream.StatusException(r.status.value)
        return r.bodyAsText()
    }

    /** 504 for a call that passed the timeout, 502 for any other failure. */
    private fun downstreamFailed(e: Exception): Pair<Int, String> {
        return when (e) {
            is HttpRequestTimeoutException,
            is SocketTimeoutException,
            is ConnectTimeoutException -> 504 to downstream.timedOutText()
            is Downstream.StatusException -> 502 to Downstream.answeredText(e.status())
            else -> 502 to Downstream.failedText(e.message)
        }
    }

    private suspend fun one(sql: String, args: Tuple): JsonObject? =
        pool.preparedQuery(sql).execute(args).awaitResult().firstOrNull()?.let(::message)

    /** A body over Contract.MAX_BODY_BYTES: 413. */
    class TooLarge : RuntimeException("body over ${Contract.MAX_BODY_BYTES} bytes")

    companion object {
        private suspend fun <T> Future<T>.awaitResult(): T = toCompletionStage().await()

        private fun message(row: Row): JsonObject = buildJsonObject {
            put("id", row.getLong(0))
            put("text", row.getString(1))
        }

        /**
         * The validated text of a create/update body, parsed with kotlinx.serialization (strict).
         */
        private suspend fun text(call: ApplicationCall): String {
            val declared = call.request.headers[HttpHeaders.ContentLength]?.toLongOrNull() ?: 0
            if (declared > Contract.MAX_BODY_BYTES) throw TooLarge()
            val bytes = call.receive<ByteArray>()
            if (bytes.size > Contract.MAX_BODY_BYTES) throw TooLarge()
            val body = String(bytes, Charsets.UTF_8)
            // kotlinx.serialization's tree reader recurses once per level and would overflow the
            // stack on the contract's 10,000-deep input: refused first, as Jackson and Parsson do.
            if (nesting(body) > MAX_NESTING)
                throw BadRequest("body nests deeper than $MAX_NESTING levels")
            val parsed =
                try {
                    Json.parseToJsonElement(body)
                } catch (e: SerializationException) {
                    throw BadRequest("body is not valid JSON")
                } catch (e: IllegalArgumentException) {
                    throw BadRequest("body is not valid JSON")
                }
            if (parsed !is JsonObject) throw BadRequest("body must be a JSON object with \"text\"")
            val text = parsed["text"]
            return Contract.messageText(
                if (text is JsonPrimitive && text.isString) text.content else null
            )
        }

        private const val MAX_NESTING = 500

        /**
         * The deepest nesting of arrays and objects in a JSON text (brackets inside strings
         * ignored).
         */
        internal fun nesting(json: String): Int {
            var depth = 0
            var deepest = 0
            var inString = false
            var escaped = false
            for (c in json) {
                when {
                    escaped -> escaped = false
                    inString && c == '\\' -> escaped = true
                    c == '"' -> inString = !inString
                    inString -> {}
                    c == '[' || c == '{' -> deepest = maxOf(deepest, ++depth)
                    c == ']' || c == '}' -> depth--
                }
            }
            return deepest
        }

        private suspend fun answer(call: ApplicationCall, status: Int, message: JsonObject?) {
            if (message == null) text(call, 404, "no such message") else json(call, status, message)
        }

        private suspend fun json(call: ApplicationCall, status: Int, value: Any) =
            call.respondText(
                value.toString(),
                ContentType.Application.Json,
                HttpStatusCode.fromValue(status),
            )

        private suspend fun text(call: ApplicationCall, status: Int, body: String) =
            call.respondText(body, ContentType.Text.Plain, HttpStatusCode.fromValue(status))
    }
}

/** "auto" leaves Ktor's default; otherwise the number given. */
private fun Args.size(name: String): Int? =
    if (get(name, "auto") == "auto") null else getInt(name, 1)

fun main(argv: Array<String>) {
    val args = Args(argv)
    val db = Database.fromEnvironment()
    val downstream = Downstream.fromEnvironment()
    val timeout = downstream.timeout().toMillis()
    // The PostgreSQL client runs its sockets on Vert.x's own event loops (Vert.x's default size).
    val connect =
        PgConnectOptions()
            .setHost(db.host())
            .setPort(db.port())
            .setDatabase(db.name())
            .setUser(db.user())
            .setPassword(db.password())
            .setCachePreparedStatements(true)
    val pool =
        PgBuilder.pool()
            .with(PoolOptions().setMaxSize(db.pool()))
            .connectingTo(connect)
            .using(Vertx.vertx())
            .build()
    val client =
        HttpClient(CIO) {
            expectSuccess = false
            followRedirects = false
            install(HttpTimeout) {
                requestTimeoutMillis = timeout
                connectTimeoutMillis = timeout
            }
            engine {
                // CIO's default is 100 connections per route; 500, as the other contenders' pools.
                maxConnectionsCount = 1000
                endpoint.maxConnectionsPerRoute = 500
            }
        }
    val app = KtorApp(pool, client, downstream)
    val port = args.getInt("port", 8080)
    embeddedServer(
            Netty,
            configure = {
                connector {
                    host = args.address()
                    this.port = port
                }
                args.size("call-group")?.let { callGroupSize = it }
                shareWorkGroup = args.get("share-work-group", "false").toBoolean()
                // The listen backlog every other contender uses.
                configureBootstrap = { option(ChannelOption.SO_BACKLOG, 4096) }
                // Ktor sizes its groups from the CPUs the JVM sees when the engine is configured.
                RuntimeReport(
                        "Netty call group threads (run the handlers' coroutines)",
                        callGroupSize,
                    )
                    .with("connection_group", connectionGroupSize)
                    .with("worker_group", workerGroupSize)
                    .with("share_work_group", shareWorkGroup.toString())
                    .print()
            },
        ) {
            with(app) { module() }
        }
        .start(wait = true)
}
