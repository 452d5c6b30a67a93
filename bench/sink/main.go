// Command sink is the benchmark's OpenLineage HTTP sink: it accepts every POST after a fixed
// latency, counts it, and reports the count. Standard library only.
//
// A Python server would be what the benchmark measures; this one takes tens of thousands of
// requests a second on one core, so the client is always the bottleneck (bench/run.py proves
// it with bench/loadgen at 0 ms latency, and reports the sink's CPU time per measurement).
//
//	sink -addr 127.0.0.1:0 -latency 5ms
//
// It prints "listening on HOST:PORT" on stdout once it accepts connections. Endpoints:
//
//	POST <any path>   read the body, wait -latency, answer 201 (what Marquez answers); counted
//	GET  /_count      {"requests": N, "bytes": B, "notJson": K} since start or the last reset
//	POST /_reset      zero the counters
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"
)

type counters struct {
	requests atomic.Int64
	bytes    atomic.Int64
	notJSON  atomic.Int64
}

func (c *counters) reset() {
	c.requests.Store(0)
	c.bytes.Store(0)
	c.notJSON.Store(0)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on (port 0: any free port)")
	latency := flag.Duration("latency", 5*time.Millisecond, "how long to wait before answering a POST")
	flag.Parse()

	var count counters
	mux := http.NewServeMux()
	mux.HandleFunc("/_count", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]int64{
			"requests": count.requests.Load(),
			"bytes":    count.bytes.Load(),
			"notJson":  count.notJSON.Load(),
		})
	})
	mux.HandleFunc("/_reset", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		count.reset()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST events here", http.StatusMethodNotAllowed)
			return
		}
		// Reading the body whole is part of accepting an event; the first byte tells an
		// object from anything else, which is as far as a sink that must stay cheap checks.
		reader := bufio.NewReaderSize(r.Body, 4096)
		first, err := reader.Peek(1)
		n, copyErr := io.Copy(io.Discard, reader)
		if copyErr != nil {
			http.Error(w, "cannot read the body", http.StatusBadRequest)
			return
		}
		if err != nil || first[0] != '{' {
			count.notJSON.Add(1)
		}
		if *latency > 0 {
			time.Sleep(*latency)
		}
		count.requests.Add(1)
		count.bytes.Add(n)
		w.WriteHeader(http.StatusCreated)
	})

	listener, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("sink: %v", err)
	}
	fmt.Fprintf(os.Stdout, "listening on %s\n", listener.Addr())
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout: 120 * time.Second}
	log.Fatal(server.Serve(listener))
}
