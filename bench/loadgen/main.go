// Command loadgen is compare.py's Go load generator (franz-go): a producer or a consumer
// with no per-record interpreter work, so that a phase measures the broker rather than
// the client.
//
//	loadgen produce -brokers HOST:PORT -topic T -records N -size S -pool FILE \
//	        -compression lz4 -acks 1 -linger-ms 5 -batch-bytes 65536
//	loadgen consume -brokers HOST:PORT -topic T -records N
//
// It connects, prints "ready", waits for a line on standard input, does its job and
// prints one JSON line: {"records", "bytes", "seconds", "cpu_seconds"} (bytes of record
// values; cpu_seconds is this process's user and system time during the job). Progress
// goes to standard error once a second.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// knuth spreads record i over the pool as produce_command.synthetic_records does.
const knuth = 2_654_435_761

type result struct {
	Records    int64   `json:"records"`
	Bytes      int64   `json:"bytes"`
	Seconds    float64 `json:"seconds"`
	CPUSeconds float64 `json:"cpu_seconds"`
}

type counter struct {
	mu      sync.Mutex
	records int64
	bytes   int64
	failed  error
}

func (c *counter) add(records, bytes int64) {
	c.mu.Lock()
	c.records += records
	c.bytes += bytes
	c.mu.Unlock()
}

func (c *counter) fail(err error) {
	c.mu.Lock()
	if c.failed == nil {
		c.failed = err
	}
	c.mu.Unlock()
}

func (c *counter) read() (int64, int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.records, c.bytes, c.failed
}

func main() {
	if len(os.Args) < 2 || (os.Args[1] != "produce" && os.Args[1] != "consume") {
		fmt.Fprintln(os.Stderr, "usage: loadgen produce|consume [flags] (-h for the flags)")
		os.Exit(2)
	}
	mode := os.Args[1]
	flags := flag.NewFlagSet(mode, flag.ExitOnError)
	brokers := flags.String("brokers", "", "bootstrap host:port")
	topic := flags.String("topic", "", "topic")
	records := flags.Int64("records", 0, "records to send or read")
	size := flags.Int("size", 1024, "record size in bytes (produce)")
	pool := flags.String("pool", "", "file of text the records are cut from (produce)")
	compression := flags.String("compression", "lz4", "none or lz4 (produce)")
	acks := flags.String("acks", "1", "1 or all (produce)")
	linger := flags.Int("linger-ms", 5, "linger.ms (produce)")
	batch := flags.Int("batch-bytes", 65536, "largest batch before compression (produce)")
	_ = flags.Parse(os.Args[2:])
	if *brokers == "" || *topic == "" || *records <= 0 {
		fail(errors.New("-brokers, -topic and -records > 0 are required"))
	}
	var run func(*kgo.Client, *counter) error
	options := []kgo.Opt{kgo.SeedBrokers(*brokers)}
	if mode == "produce" {
		text, err := os.ReadFile(*pool)
		if err != nil {
			fail(err)
		}
		if len(text) <= *size {
			fail(fmt.Errorf("the pool (%d bytes) must be longer than a record", len(text)))
		}
		producerOptions, err := producerOptions(*compression, *acks, *linger, *batch)
		if err != nil {
			fail(err)
		}
		options = append(options, producerOptions...)
		run = func(client *kgo.Client, done *counter) error {
			return produce(client, done, *topic, *records, *size, text)
		}
	} else {
		options = append(options,
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.FetchMaxBytes(64<<20),
			kgo.FetchMaxPartitionBytes(16<<20),
		)
		run = func(client *kgo.Client, done *counter) error {
			return consume(client, done, *topic, *records)
		}
	}
	client, err := kgo.NewClient(options...)
	if err != nil {
		fail(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	err = client.Ping(ctx)
	cancel()
	if err != nil {
		fail(fmt.Errorf("no broker answered at %s: %w", *brokers, err))
	}
	stdin := bufio.NewReader(os.Stdin)
	fmt.Println("ready")
	if _, err := stdin.ReadString('\n'); err != nil {
		fail(errors.New("standard input closed before the go-ahead"))
	}
	done := &counter{}
	stop := reportProgress(mode, done, *records)
	cpuBefore := cpuSeconds()
	start := time.Now()
	err = run(client, done)
	seconds := time.Since(start).Seconds()
	cpu := cpuSeconds() - cpuBefore
	close(stop)
	if err != nil {
		fail(err)
	}
	moved, bytes, _ := done.read()
	line, _ := json.Marshal(result{moved, bytes, seconds, cpu})
	fmt.Println(string(line))
}

func producerOptions(compression, acks string, lingerMs, batch int) ([]kgo.Opt, error) {
	codecs := map[string]kgo.CompressionCodec{"none": kgo.NoCompression(), "lz4": kgo.Lz4Compression()}
	codec, found := codecs[compression]
	if !found {
		return nil, fmt.Errorf("-compression %q: none or lz4", compression)
	}
	required := map[string]kgo.Acks{"1": kgo.LeaderAck(), "all": kgo.AllISRAcks()}
	ack, found := required[acks]
	if !found {
		return nil, fmt.Errorf("-acks %q: 1 or all", acks)
	}
	return []kgo.Opt{
		kgo.ProducerBatchCompression(codec),
		kgo.RequiredAcks(ack),
		// not idempotent, as librdkafka's producer in the Python phases
		kgo.DisableIdempotentWrite(),
		kgo.ProducerLinger(time.Duration(lingerMs) * time.Millisecond),
		kgo.ProducerBatchMaxBytes(int32(batch)),
		// a keyless record goes to one partition until a batch's worth went there
		kgo.RecordPartitioner(kgo.UniformBytesPartitioner(batch, true, true, nil)),
		// the Python producer's queue: librdkafka's 100,000 messages and the 1 GiB of
		// queue.buffering.max.kbytes it is given (kgo's default of 10,000 records would
		// hold back small records)
		kgo.MaxBufferedRecords(100_000),
		kgo.MaxBufferedBytes(1 << 30),
	}, nil
}

// produce sends records numbered 0..records-1: the number, a space, then text cut from
// the pool (as compare.py's Python producer does), and waits for every acknowledgement.
func produce(client *kgo.Client, done *counter, topic string, records int64, size int, pool []byte) error {
	spread := int64(len(pool) - size)
	ctx := context.Background()
	for number := int64(0); number < records; number++ {
		value := make([]byte, 0, size)
		value = strconv.AppendInt(value, number, 10)
		value = append(value, ' ')
		value = value[:min(len(value), size)]
		start := number * knuth % spread
		value = append(value, pool[start:start+int64(size-len(value))]...)
		client.Produce(ctx, &kgo.Record{Topic: topic, Value: value}, func(r *kgo.Record, err error) {
			if err != nil {
				done.fail(err)
			} else {
				done.add(1, int64(len(r.Value)))
			}
		})
	}
	if err := client.Flush(ctx); err != nil {
		return err
	}
	if _, _, err := done.read(); err != nil {
		return fmt.Errorf("a record failed: %w", err)
	}
	return nil
}

// consume reads every partition of topic from its start until records records arrived.
func consume(client *kgo.Client, done *counter, topic string, records int64) error {
	client.AddConsumeTopics(topic)
	ctx := context.Background()
	for {
		fetches := client.PollFetches(ctx)
		if errs := fetches.Errors(); len(errs) > 0 {
			return fmt.Errorf("fetching %s[%d]: %w", errs[0].Topic, errs[0].Partition, errs[0].Err)
		}
		var count, bytes int64
		fetches.EachRecord(func(r *kgo.Record) {
			count++
			bytes += int64(len(r.Value))
		})
		done.add(count, bytes)
		if got, _, _ := done.read(); got >= records {
			return nil
		}
	}
}

func reportProgress(mode string, done *counter, records int64) chan struct{} {
	stop := make(chan struct{})
	verb := map[string]string{"produce": "produced", "consume": "consumed"}[mode]
	go func() {
		ticker := time.NewTicker(time.Second)
		defer ticker.Stop()
		for {
			select {
			case <-stop:
				return
			case <-ticker.C:
				got, _, _ := done.read()
				fmt.Fprintf(os.Stderr, "loadgen: %s %d of %d records\n", verb, got, records)
			}
		}
	}()
	return stop
}

func cpuSeconds() float64 {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		return 0
	}
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano()).Seconds()
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "loadgen:", err)
	os.Exit(1)
}
