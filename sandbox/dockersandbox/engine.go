package dockersandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"

	"github.com/paddockdev/paddock/workspace"
)

// ErrUnavailable is returned by [Probe] and [Open] when no Docker engine
// answers; the error says why.
var ErrUnavailable = errors.New("dockersandbox: Docker engine unavailable")

// ErrImageNotFound is returned when a Config's image is not in the engine.
// Nothing is ever pulled: build or load the image first.
var ErrImageNotFound = errors.New("dockersandbox: image not found in the engine")

// ErrBusy is returned when a container would have to be removed or
// recreated while a command runs in it.
var ErrBusy = errors.New("dockersandbox: container has an exec in flight")

// ErrNotSandbox is returned by [Engine.Remove] and [Engine.Recreate] for a
// container that is not one of this registry's sandboxes.
var ErrNotSandbox = errors.New("dockersandbox: not a paddock sandbox container")

// EngineOptions are the optional settings of [Open]. A nil *EngineOptions
// means the defaults.
type EngineOptions struct {
	// Now returns the current time; nil means time.Now. Tests of Prune
	// pass a fake clock.
	Now func() time.Time
	// ClientOptions are applied after client.FromEnv and API version
	// negotiation (DOCKER_HOST, DOCKER_TLS_VERIFY, DOCKER_CERT_PATH are
	// honoured).
	ClientOptions []client.Opt
}

// Engine is a connection to a Docker engine plus the registry of the
// sandbox containers of one state root. It is safe for concurrent use.
type Engine struct {
	cli   *client.Client
	reg   *registry
	now   func() time.Time
	scope string

	mu      sync.Mutex
	busy    map[string]int         // container name -> execs in flight
	locks   map[string]*sync.Mutex // container name -> ensure/remove lock
	used    map[string]time.Time   // container name -> last use not yet written
	flushed time.Time
}

// newClient returns a client configured from the environment.
func newClient(extra []client.Opt) (*client.Client, error) {
	opts := append([]client.Opt{client.FromEnv, client.WithAPIVersionNegotiation()}, extra...)
	cli, err := client.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return cli, nil
}

func ping(ctx context.Context, cli *client.Client) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := cli.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		return fmt.Errorf("%w at %s (start dockerd, or set DOCKER_HOST): %v", ErrUnavailable, cli.DaemonHost(), err)
	}
	return nil
}

// Probe reports whether a Docker engine answers at the address the
// environment names (DOCKER_HOST, or the local socket). The error wraps
// ErrUnavailable.
func Probe(ctx context.Context) error {
	cli, err := newClient(nil)
	if err != nil {
		return err
	}
	defer cli.Close()
	return ping(ctx, cli)
}

// RegistryPath returns where the registry of paths' state root lives.
func RegistryPath(paths workspace.Paths) string {
	return filepath.Join(paths.StateRoot, "dockersandbox", "containers.json")
}

// Open connects to the engine the environment names and opens the registry
// in paths' state root. It fails with an error wrapping ErrUnavailable when
// no engine answers.
func Open(ctx context.Context, paths workspace.Paths, opts *EngineOptions) (*Engine, error) {
	var o EngineOptions
	if opts != nil {
		o = *opts
	}
	if !filepath.IsAbs(paths.StateRoot) {
		return nil, fmt.Errorf("dockersandbox: state root %q is not absolute: build Paths with workspace.NewPaths", paths.StateRoot)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	cli, err := newClient(o.ClientOptions)
	if err != nil {
		return nil, err
	}
	if err := ping(ctx, cli); err != nil {
		cli.Close()
		return nil, err
	}
	sum := sha256.Sum256([]byte(filepath.Clean(paths.StateRoot)))
	return &Engine{
		cli:   cli,
		reg:   &registry{path: RegistryPath(paths)},
		now:   o.Now,
		scope: hex.EncodeToString(sum[:8]),
		busy:  map[string]int{},
		locks: map[string]*sync.Mutex{},
		used:  map[string]time.Time{},
	}, nil
}

// Client returns the Engine API client, for what this package does not do
// (building images, say).
func (e *Engine) Client() *client.Client { return e.cli }

// Close writes the last-use times not yet written and closes the client.
// It does not stop or remove containers.
func (e *Engine) Close() error {
	err := e.flush(true)
	return errors.Join(err, e.cli.Close())
}

// Container is a sandbox container as the registry and the engine know it.
type Container struct {
	Entry
	ID    string
	State string // the engine's state: "running", "exited", … or "missing"
}

func (e *Engine) lock(name string) func() {
	e.mu.Lock()
	l := e.locks[name]
	if l == nil {
		l = &sync.Mutex{}
		e.locks[name] = l
	}
	e.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// inFlight reports whether a command runs in the container, as this Engine
// knows it or as the engine reports it (execs started by other processes).
func (e *Engine) inFlight(ctx context.Context, name string, execIDs []string) bool {
	e.mu.Lock()
	n := e.busy[name]
	e.mu.Unlock()
	if n > 0 {
		return true
	}
	// An exec that was just killed may be reported running for a moment
	// while the engine tears it down: give each a little while to end.
	deadline := time.Now().Add(2 * time.Second)
	for _, id := range execIDs {
		for {
			r, err := e.cli.ExecInspect(ctx, id, client.ExecInspectOptions{})
			if err != nil || !r.Running {
				break
			}
			if time.Now().After(deadline) {
				return true
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return false
}

// imageID returns the digest of ref.
func (e *Engine) imageID(ctx context.Context, ref string) (string, error) {
	img, err := e.cli.ImageInspect(ctx, ref)
	if cerrdefs.IsNotFound(err) {
		return "", fmt.Errorf("%w: %s (nothing is pulled: build it or load it with docker load)", ErrImageNotFound, ref)
	}
	if err != nil {
		return "", fmt.Errorf("dockersandbox: inspect image %s: %w", ref, err)
	}
	return img.ID, nil
}

// EnsureContainer returns the running container for cfg: the existing one
// when its config hash matches (started if it was stopped), or a new one.
// A container whose hash differs is removed and recreated, unless a command
// runs in it: then EnsureContainer fails with an error wrapping ErrBusy.
func (e *Engine) EnsureContainer(ctx context.Context, cfg Config) (*Container, error) {
	// Refuse a bad config before asking the engine anything.
	n, err := normalize(cfg, "")
	if err != nil {
		return nil, err
	}
	imageID, err := e.imageID(ctx, cfg.Image)
	if err != nil {
		return nil, err
	}
	n.ImageID = imageID
	hash := n.hash()
	name := ContainerName(cfg.Key)
	defer e.lock(name)()

	info, err := e.cli.ContainerInspect(ctx, name, client.ContainerInspectOptions{})
	switch {
	case cerrdefs.IsNotFound(err):
	case err != nil:
		return nil, fmt.Errorf("dockersandbox: inspect %s: %w", name, err)
	case info.Container.Config != nil && info.Container.Config.Labels[LabelConfigHash] == hash && info.Container.Config.Labels[LabelScope] == e.scope:
		if info.Container.State == nil || !info.Container.State.Running {
			if _, err := e.cli.ContainerStart(ctx, info.Container.ID, client.ContainerStartOptions{}); err != nil {
				return nil, fmt.Errorf("dockersandbox: start %s: %w", name, err)
			}
		}
		created, _ := time.Parse(time.RFC3339Nano, info.Container.Created)
		return e.record(name, cfg.Key, info.Container.ID, created, imageID, hash)
	default:
		if info.Container.Config == nil || info.Container.Config.Labels[LabelSandbox] != "1" {
			return nil, fmt.Errorf("%w: a container named %s exists and is not a paddock sandbox: remove or rename it", ErrNotSandbox, name)
		}
		if info.Container.Config.Labels[LabelScope] != e.scope {
			return nil, fmt.Errorf("%w: %s belongs to another state root's registry: use another key, or remove it there (or with docker rm)", ErrNotSandbox, name)
		}
		if e.inFlight(ctx, name, info.Container.ExecIDs) {
			return nil, fmt.Errorf("%w: %s must be recreated for a changed config, but a command runs in it: retry when it ends", ErrBusy, name)
		}
		if _, err := e.cli.ContainerRemove(ctx, info.Container.ID, client.ContainerRemoveOptions{Force: true}); err != nil && !cerrdefs.IsNotFound(err) {
			return nil, fmt.Errorf("dockersandbox: remove %s for recreation: %w", name, err)
		}
	}
	id, err := e.create(ctx, name, n, hash)
	if err != nil {
		return nil, err
	}
	return e.record(name, cfg.Key, id, e.now(), imageID, hash)
}

func (e *Engine) record(name, key, id string, created time.Time, imageID, hash string) (*Container, error) {
	now := e.now()
	var out Entry
	err := e.reg.update(func(m map[string]*Entry) bool {
		ent := m[name]
		if ent == nil || ent.ConfigHash != hash {
			ent = &Entry{Name: name, Key: key, Created: created}
			m[name] = ent
		}
		ent.LastUsed, ent.ImageDigest, ent.ConfigHash = now, imageID, hash
		out = *ent
		return true
	})
	if err != nil {
		return nil, err
	}
	return &Container{Entry: out, ID: id, State: "running"}, nil
}

// sleeper is the container's main process: it waits, doing nothing, until
// it is stopped. docker-init (Init) is PID 1 and reaps orphans.
var sleeper = []string{"/bin/sh", "-c", "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done"}

// create makes and starts the hardened container.
func (e *Engine) create(ctx context.Context, name string, n *normalized, hash string) (string, error) {
	labels := map[string]string{}
	for k, v := range n.Labels {
		labels[k] = v
	}
	labels[LabelSandbox] = "1"
	labels[LabelKey] = n.Key
	labels[LabelConfigHash] = hash
	labels[LabelImageDigest] = n.ImageID
	labels[LabelScope] = e.scope
	cfg := &container.Config{
		Image:      n.ImageID,
		Entrypoint: []string{},
		Cmd:        sleeper,
		Env:        n.Env,
		User:       n.User,
		WorkingDir: Workdir,
		Labels:     labels,
	}
	secOpts := []string{"no-new-privileges:true"}
	if n.Seccomp != "" {
		secOpts = append(secOpts, "seccomp="+n.Seccomp)
	}
	if n.AppArmor != "" {
		secOpts = append(secOpts, "apparmor="+n.AppArmor)
	}
	init := true
	pids := n.PIDs
	hc := &container.HostConfig{
		Mounts:         []mount.Mount{{Type: mount.TypeBind, Source: n.WorkDir, Target: Workdir}},
		NetworkMode:    container.NetworkMode(n.Network),
		ReadonlyRootfs: true,
		Tmpfs: map[string]string{
			"/tmp":     "rw,nosuid,nodev,size=256m,mode=1777",
			"/var/tmp": "rw,nosuid,nodev,size=256m,mode=1777",
			"/run":     "rw,nosuid,nodev,noexec,size=16m,mode=1777",
		},
		CapDrop:     []string{"ALL"},
		SecurityOpt: secOpts,
		Init:        &init,
		IpcMode:     "private",
		ExtraHosts:  n.ExtraHosts,
		Resources: container.Resources{
			Memory:     n.MemoryBytes,
			MemorySwap: n.MemoryBytes,
			NanoCPUs:   n.NanoCPUs,
			PidsLimit:  &pids,
			Ulimits:    []*container.Ulimit{{Name: "nofile", Soft: n.NoFile, Hard: n.NoFile}},
		},
	}
	for _, d := range n.DNS {
		hc.DNS = append(hc.DNS, netip.MustParseAddr(d))
	}
	for _, b := range n.Binds {
		hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeBind, Source: b.Source, Target: b.Target, ReadOnly: b.ReadOnly})
	}
	res, err := e.cli.ContainerCreate(ctx, client.ContainerCreateOptions{Name: name, Config: cfg, HostConfig: hc})
	if err != nil {
		return "", fmt.Errorf("dockersandbox: create %s: %w", name, err)
	}
	if _, err := e.cli.ContainerStart(ctx, res.ID, client.ContainerStartOptions{}); err != nil {
		e.cli.ContainerRemove(context.WithoutCancel(ctx), res.ID, client.ContainerRemoveOptions{Force: true})
		return "", fmt.Errorf("dockersandbox: start %s: %w", name, err)
	}
	return res.ID, nil
}

// touch records a use of the container; the registry is written at most
// once a minute (and by Close), so that Exec stays cheap.
func (e *Engine) touch(name string) {
	e.mu.Lock()
	e.used[name] = e.now()
	due := e.now().Sub(e.flushed) > time.Minute
	e.mu.Unlock()
	if due {
		e.flush(false)
	}
}

func (e *Engine) flush(force bool) error {
	e.mu.Lock()
	used := e.used
	if len(used) == 0 && !force {
		e.mu.Unlock()
		return nil
	}
	e.used = map[string]time.Time{}
	e.flushed = e.now()
	e.mu.Unlock()
	if len(used) == 0 {
		return nil
	}
	return e.reg.update(func(m map[string]*Entry) bool {
		changed := false
		for name, t := range used {
			if ent := m[name]; ent != nil && t.After(ent.LastUsed) {
				ent.LastUsed, changed = t, true
			}
		}
		return changed
	})
}

// Reconcile brings the registry in line with the engine: containers
// labelled as this state root's sandboxes that the registry lost are added
// (created and last used at their creation time), and entries whose
// container is gone are dropped. It returns the containers.
func (e *Engine) Reconcile(ctx context.Context) ([]Container, error) {
	if err := e.flush(false); err != nil {
		return nil, err
	}
	f := client.Filters{}.Add("label", LabelSandbox+"=1", LabelScope+"="+e.scope)
	list, err := e.cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return nil, fmt.Errorf("dockersandbox: list containers: %w", err)
	}
	live := map[string]container.Summary{}
	for _, c := range list.Items {
		for _, n := range c.Names {
			live[trimSlash(n)] = c
		}
	}
	var out []Container
	err = e.reg.update(func(m map[string]*Entry) bool {
		changed := false
		for name := range m {
			if _, ok := live[name]; !ok {
				delete(m, name)
				changed = true
			}
		}
		for name, c := range live {
			ent := m[name]
			if ent == nil || ent.ConfigHash != c.Labels[LabelConfigHash] {
				created := time.Unix(c.Created, 0).UTC()
				ent = &Entry{Name: name, Key: c.Labels[LabelKey], Created: created, LastUsed: created,
					ImageDigest: c.Labels[LabelImageDigest], ConfigHash: c.Labels[LabelConfigHash]}
				m[name] = ent
				changed = true
			}
			out = append(out, Container{Entry: *ent, ID: c.ID, State: string(c.State)})
		}
		return changed
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, err
}

func trimSlash(s string) string {
	if len(s) > 0 && s[0] == '/' {
		return s[1:]
	}
	return s
}

// List returns this state root's sandbox containers, reconciled with the
// engine (the seed's `sandbox list`).
func (e *Engine) List(ctx context.Context) ([]Container, error) { return e.Reconcile(ctx) }

// Remove removes the sandbox container name and its registry entry (the
// seed's `sandbox remove`). It fails with ErrBusy while a command runs in
// it, and with ErrNotSandbox for a container that is not this registry's.
// Removing a container that is already gone drops its entry.
func (e *Engine) Remove(ctx context.Context, name string) error {
	defer e.lock(name)()
	info, err := e.cli.ContainerInspect(ctx, name, client.ContainerInspectOptions{})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("dockersandbox: inspect %s: %w", name, err)
	}
	if err == nil {
		c := info.Container
		if c.Config == nil || c.Config.Labels[LabelSandbox] != "1" || c.Config.Labels[LabelScope] != e.scope {
			return fmt.Errorf("%w: %s", ErrNotSandbox, name)
		}
		if e.inFlight(ctx, name, c.ExecIDs) {
			return fmt.Errorf("%w: %s", ErrBusy, name)
		}
		if _, err := e.cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true}); err != nil && !cerrdefs.IsNotFound(err) {
			return fmt.Errorf("dockersandbox: remove %s: %w", name, err)
		}
	}
	return e.reg.update(func(m map[string]*Entry) bool {
		_, ok := m[name]
		delete(m, name)
		return ok
	})
}

// Recreate removes the container name so that the next EnsureContainer (or
// New) for its key creates it afresh from the current settings and image
// (the seed's `sandbox recreate`). It fails as Remove does.
func (e *Engine) Recreate(ctx context.Context, name string) error { return e.Remove(ctx, name) }

// PruneOptions are the optional settings of [Engine.Prune]; nil means the
// seed's defaults.
type PruneOptions struct {
	IdleHours  int // zero means DefaultIdleHours
	MaxAgeDays int // zero means DefaultMaxAgeDays
}

// PruneReport says what Prune removed and what it could not.
type PruneReport struct {
	Removed []Pruned
	Failed  []PruneFailure
}

// Pruned is a removed container and why it was removed.
type Pruned struct {
	Name   string
	Reason string // "idle 30h0m0s > 24h", "age 8d > 7d"
}

// PruneFailure is a container Prune should have removed and did not.
type PruneFailure struct {
	Name string
	Err  error
}

// Prune removes the containers (after a Reconcile) unused for longer than
// IdleHours or older than MaxAgeDays, measured with the Engine's clock. A
// container with a command in flight is not removed: it is reported in
// Failed with an error wrapping ErrBusy. The error is for a Prune that could
// not look at the containers at all.
func (e *Engine) Prune(ctx context.Context, opts *PruneOptions) (*PruneReport, error) {
	var o PruneOptions
	if opts != nil {
		o = *opts
	}
	if o.IdleHours < 0 || o.MaxAgeDays < 0 {
		return nil, fmt.Errorf("%w: negative prune limits", ErrInvalidConfig)
	}
	idle := time.Duration(cmpOr(int64(o.IdleHours), DefaultIdleHours)) * time.Hour
	maxAge := time.Duration(cmpOr(int64(o.MaxAgeDays), DefaultMaxAgeDays)) * 24 * time.Hour
	list, err := e.Reconcile(ctx)
	if err != nil {
		return nil, err
	}
	now := e.now()
	rep := &PruneReport{}
	for _, c := range list {
		var why string
		switch {
		case now.Sub(c.Created) > maxAge:
			why = "age " + now.Sub(c.Created).Round(time.Second).String() + " > " + strconv.Itoa(int(maxAge/time.Hour)) + "h"
		case now.Sub(c.LastUsed) > idle:
			why = "idle " + now.Sub(c.LastUsed).Round(time.Second).String() + " > " + strconv.Itoa(int(idle/time.Hour)) + "h"
		default:
			continue
		}
		if err := e.Remove(ctx, c.Name); err != nil {
			rep.Failed = append(rep.Failed, PruneFailure{Name: c.Name, Err: err})
			continue
		}
		rep.Removed = append(rep.Removed, Pruned{Name: c.Name, Reason: why})
	}
	return rep, nil
}
