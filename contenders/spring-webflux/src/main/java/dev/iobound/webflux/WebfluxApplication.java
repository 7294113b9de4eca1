package dev.iobound.webflux;

import dev.iobound.common.BadRequest;
import dev.iobound.common.Contract;
import java.time.Duration;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/** Event loop: a few Netty threads serve every connection; waiting is a timer, never a blocked thread. */
@SpringBootApplication
@RestController
public class WebfluxApplication {
    public static void main(String[] args) {
        SpringApplication.run(WebfluxApplication.class, args);
    }

    @GetMapping(value = "/plaintext", produces = MediaType.TEXT_PLAIN_VALUE)
    public Mono<String> plaintext() {
        return Mono.just(Contract.PLAINTEXT);
    }

    @GetMapping(value = "/delay", produces = MediaType.TEXT_PLAIN_VALUE)
    public Mono<String> delay(@RequestParam(name = "ms", required = false) String ms) {
        long millis = Contract.delayMs(ms);
        return Mono.delay(Duration.ofMillis(millis)).thenReturn(Long.toString(millis));
    }

    @ExceptionHandler(BadRequest.class)
    public ResponseEntity<String> badRequest(BadRequest e) {
        return ResponseEntity.badRequest().contentType(MediaType.TEXT_PLAIN).body(e.getMessage());
    }
}
