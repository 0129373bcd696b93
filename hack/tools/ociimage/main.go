// Command ociimage packs plain tar layers and an image configuration into a docker-archive
// tarball, the form `ctr images import` takes: how the real node's images (the pause image,
// the Spark image) are made without a Docker engine or a registry.
//
//	ociimage -name docker.io/apache/spark:4.0.4 -o spark.tar -layer rootfs.tar \
//	  -entrypoint /opt/entrypoint.sh -user 185 -workdir /opt/spark/work-dir -env SPARK_HOME=/opt/spark
//
// With -base, the image is another docker-archive tarball's image with the layers on top: its
// configuration is kept but for what the flags set (-env adds or replaces variables).
package main

import (
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// repeated collects a flag given more than once.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, " ") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

type options struct {
	name, out, base, user, workdir, entrypoint, cmd string
	layers, env                                     repeated
}

func main() {
	var o options
	flag.StringVar(&o.name, "name", "", "the image's reference, e.g. docker.io/apache/spark:4.0.4 (required)")
	flag.StringVar(&o.out, "o", "", "the docker-archive tarball to write (required)")
	flag.StringVar(&o.base, "base", "", "a docker-archive tarball of one image to build on (its layers and configuration)")
	flag.Var(&o.layers, "layer", "a plain tar of files, bottom layer first (repeatable, at least one)")
	flag.StringVar(&o.entrypoint, "entrypoint", "", "the entrypoint, comma-separated")
	flag.StringVar(&o.cmd, "cmd", "", "the default arguments, comma-separated")
	flag.StringVar(&o.user, "user", "", "the user the image runs as (uid or uid:gid)")
	flag.StringVar(&o.workdir, "workdir", "", "the working directory")
	flag.Var(&o.env, "env", "an environment variable KEY=VALUE (repeatable)")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "ociimage:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	if o.name == "" || o.out == "" || len(o.layers) == 0 {
		return errors.New("-name, -o and at least one -layer are required")
	}
	ref, err := name.NewTag(o.name)
	if err != nil {
		return fmt.Errorf("-name %q: %w", o.name, err)
	}
	for _, e := range o.env {
		if k, _, ok := strings.Cut(e, "="); !ok || k == "" {
			return fmt.Errorf("-env %q: want KEY=VALUE", e)
		}
	}
	img := empty.Image
	if o.base != "" {
		if img, err = tarball.ImageFromPath(o.base, nil); err != nil {
			return fmt.Errorf("-base %s: %w", o.base, err)
		}
	}
	for _, path := range o.layers {
		// The fastest gzip: images are made and imported on this machine, never shipped.
		layer, err := tarball.LayerFromFile(path, tarball.WithCompressionLevel(gzip.BestSpeed))
		if err != nil {
			return fmt.Errorf("layer %s: %w", path, err)
		}
		if img, err = mutate.AppendLayers(img, layer); err != nil {
			return fmt.Errorf("layer %s: %w", path, err)
		}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "amd64"
	cf.Config = configure(cf.Config, o)
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return err
	}
	tmp := o.out + ".tmp"
	if err := tarball.WriteToFile(tmp, ref, img); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", o.out, err)
	}
	return os.Rename(tmp, o.out)
}

// configure is the image's configuration: the base's (none without -base) with what the
// flags set.
func configure(base v1.Config, o options) v1.Config {
	var c v1.Config
	if o.base != "" {
		c = base
	}
	if o.entrypoint != "" {
		c.Entrypoint, c.Cmd = list(o.entrypoint), nil // the base's arguments were for its entrypoint
	}
	if o.cmd != "" {
		c.Cmd = list(o.cmd)
	}
	if o.user != "" {
		c.User = o.user
	}
	if o.workdir != "" {
		c.WorkingDir = o.workdir
	}
	for _, e := range o.env {
		k, _, _ := strings.Cut(e, "=")
		c.Env = slices.DeleteFunc(c.Env, func(have string) bool { return strings.HasPrefix(have, k+"=") })
		c.Env = append(c.Env, e)
	}
	return c
}

// list splits a comma-separated flag value; empty gives none.
func list(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}
