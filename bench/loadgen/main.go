// Command loadgen POSTs prebuilt JSON events to an HTTP endpoint as fast as the server takes
// them, at a fixed concurrency: the upper limit any exporter could reach. Standard library only.
//
//	loadgen -url http://127.0.0.1:5000/api/v1/lineage -events events.jsonl -concurrency 64 [-n N]
//
// Every line of -events is one request body. With -n larger than the number of lines, the
// lines are sent again in turn (to measure a sink's capacity); order across workers is not
// kept (a run's events may overtake each other). It prints one JSON object on stdout:
// {"requests", "ok", "failed", "seconds", "perSecond", "firstError"}; "seconds" runs from the
// first request to the last answer, connections included.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

func readLines(path string) ([][]byte, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	var lines [][]byte
	scanner := bufio.NewScanner(file)
	scanner.Buffer(make([]byte, 1<<20), 64<<20)
	for scanner.Scan() {
		if len(scanner.Bytes()) > 0 {
			lines = append(lines, bytes.Clone(scanner.Bytes()))
		}
	}
	return lines, scanner.Err()
}

func main() {
	url := flag.String("url", "", "where to POST the events")
	events := flag.String("events", "", "JSON Lines file: one request body a line")
	concurrency := flag.Int("concurrency", 64, "requests in flight at once")
	total := flag.Int("n", 0, "requests to send (default: each line once)")
	timeout := flag.Duration("timeout", 30*time.Second, "timeout of one request")
	flag.Parse()
	if *url == "" || *events == "" || *concurrency < 1 {
		flag.Usage()
		os.Exit(2)
	}
	lines, err := readLines(*events)
	if err != nil {
		log.Fatalf("loadgen: %v", err)
	}
	if len(lines) == 0 {
		log.Fatalf("loadgen: %s holds no events", *events)
	}
	n := *total
	if n <= 0 {
		n = len(lines)
	}
	client := &http.Client{
		Timeout: *timeout,
		Transport: &http.Transport{
			MaxIdleConns:        *concurrency,
			MaxIdleConnsPerHost: *concurrency,
			MaxConnsPerHost:     *concurrency,
			DisableCompression:  true,
		},
	}

	var next, ok, failed atomic.Int64
	var firstError atomic.Value
	var wg sync.WaitGroup
	started := time.Now()
	for w := 0; w < *concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				body := lines[i%int64(len(lines))]
				req, _ := http.NewRequest(http.MethodPost, *url, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					failed.Add(1)
					firstError.CompareAndSwap(nil, err.Error())
					continue
				}
				answer, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode >= 200 && resp.StatusCode < 300 {
					ok.Add(1)
				} else {
					failed.Add(1)
					firstError.CompareAndSwap(nil, fmt.Sprintf("HTTP %d: %.300s", resp.StatusCode, answer))
				}
			}
		}()
	}
	wg.Wait()
	seconds := time.Since(started).Seconds()
	report := map[string]any{
		"requests":    n,
		"ok":          ok.Load(),
		"failed":      failed.Load(),
		"seconds":     seconds,
		"perSecond":   float64(ok.Load()) / seconds,
		"concurrency": *concurrency,
		"firstError":  firstError.Load(),
	}
	if err := json.NewEncoder(os.Stdout).Encode(report); err != nil {
		log.Fatalf("loadgen: %v", err)
	}
}
