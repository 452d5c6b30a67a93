// Command sink is the benchmark's OpenLineage HTTP sink: it accepts every POST after a fixed
// latency, counts it, and reports the count. Standard library only.
//
// A Python server would be what the benchmark measures; this one takes tens of thousands of
// requests a second on one core, so the client is always the bottleneck (bench/run.py proves
// it with bench/loadgen at 0 ms latency, and reports the sink's CPU time per measurement).
//
//	sink -addr 127.0.0.1:0 -latency 5ms [-batches]
//
// It prints "listening on HOST:PORT" on stdout once it accepts connections. Endpoints:
//
//	POST <any path>   read the body, wait -latency, answer 201 (what Marquez answers); counted
//	POST <path>/batch with -batches: the spec's batch (a JSON array of events), each counted,
//	                  answered 204 after -latency; without it, 404 (a server with no batches)
//	GET  /_count      {"requests": N, "events": E, "bytes": B, "notJson": K} since start or
//	                  the last reset
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
	"strings"
	"sync/atomic"
	"time"
)

type counters struct {
	requests atomic.Int64
	events   atomic.Int64
	bytes    atomic.Int64
	notJSON  atomic.Int64
}

func (c *counters) reset() {
	c.requests.Store(0)
	c.events.Store(0)
	c.bytes.Store(0)
	c.notJSON.Store(0)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on (port 0: any free port)")
	latency := flag.Duration("latency", 5*time.Millisecond, "how long to wait before answering a POST")
	batches := flag.Bool("batches", false, "take the spec's batches at <path>/batch (else 404 there)")
	flag.Parse()

	var count counters
	mux := http.NewServeMux()
	mux.HandleFunc("/_count", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]int64{
			"requests": count.requests.Load(),
			"events":   count.events.Load(),
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
		if strings.HasSuffix(r.URL.Path, "/batch") {
			if !*batches {
				http.Error(w, "no batches here", http.StatusNotFound)
				return
			}
			n, events, ok := readBatch(r.Body)
			if !ok {
				count.notJSON.Add(1)
				http.Error(w, "not a JSON array of events", http.StatusBadRequest)
				return
			}
			if *latency > 0 {
				time.Sleep(*latency)
			}
			count.requests.Add(1)
			count.events.Add(events)
			count.bytes.Add(n)
			w.WriteHeader(http.StatusNoContent)
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
		count.events.Add(1)
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

// readBatch reads a JSON array of objects: its bytes, how many objects, and whether it was one.
func readBatch(body io.Reader) (int64, int64, bool) {
	counted := &countingReader{r: body}
	decoder := json.NewDecoder(bufio.NewReaderSize(counted, 65536))
	if token, err := decoder.Token(); err != nil || token != json.Delim('[') {
		return counted.n, 0, false
	}
	var events int64
	for decoder.More() {
		var event json.RawMessage
		if err := decoder.Decode(&event); err != nil || len(event) == 0 || event[0] != '{' {
			return counted.n, events, false
		}
		events++
	}
	if _, err := decoder.Token(); err != nil {
		return counted.n, events, false
	}
	return counted.n, events, true
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
