/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package native

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/sparkconf"
	"github.com/sparkop/spark-operator/submission"
)

// Spark property keys that the native submitter reads from the conf (as Spark's Kubernetes
// client does) or adds to it (as spark-submit does). The translation of the spec into
// properties is sparkconf's.
const (
	keyAppName              = "spark.app.name"
	keyAppID                = "spark.app.id"
	keyAppSubmitTime        = "spark.app.submitTime"
	keyMaster               = "spark.master"
	keyDeployMode           = "spark.submit.deployMode"
	keyNamespace            = "spark.kubernetes.namespace"
	keyDriverPodName        = "spark.kubernetes.driver.pod.name"
	keyImage                = "spark.kubernetes.container.image"
	keyDriverImage          = "spark.kubernetes.driver.container.image"
	keyPullPolicy           = "spark.kubernetes.container.image.pullPolicy"
	keyPullSecrets          = "spark.kubernetes.container.image.pullSecrets"
	keyDriverServiceAccount = "spark.kubernetes.authenticate.driver.serviceAccountName"
	keyJars                 = "spark.jars"
	keyFiles                = "spark.files"
	keyPyFiles              = "spark.submit.pyFiles"
	keyPackages             = "spark.jars.packages"
	keyExcludes             = "spark.jars.excludes"
	keyRepositories         = "spark.jars.repositories"
	keyArchives             = "spark.archives"
	keyPySparkPython        = "spark.pyspark.python"
	keyPySparkDriverPython  = "spark.pyspark.driver.python"
	keySubmitInDriver       = "spark.kubernetes.submitInDriver"
	keyDriverHost           = "spark.driver.host"
	keyDriverPort           = "spark.driver.port"
	keyBlockManagerPort     = "spark.driver.blockManager.port"
	keyUIPort               = "spark.ui.port"
	keyExecTemplateFile     = "spark.kubernetes.executor.podTemplateFile"
	keyExecTemplateName     = "spark.kubernetes.executor.podTemplateContainerName"
	keyLocalDirsTmpfs       = "spark.kubernetes.local.dirs.tmpfs"
	keyIPFamilyPolicy       = "spark.kubernetes.driver.service.ipFamilyPolicy"
	keyIPFamilies           = "spark.kubernetes.driver.service.ipFamilies"

	prefixDriverLabel        = "spark.kubernetes.driver.label."
	prefixDriverAnnotation   = "spark.kubernetes.driver.annotation."
	prefixDriverEnv          = "spark.kubernetes.driverEnv."
	prefixDriverSecrets      = "spark.kubernetes.driver.secrets."
	prefixDriverSecretKeyRef = "spark.kubernetes.driver.secretKeyRef."
	prefixDriverSvcLabel     = "spark.kubernetes.driver.service.label."
	prefixDriverSvcAnnot     = "spark.kubernetes.driver.service.annotation."
)

// conf is a Spark configuration: what spark-submit would hold after parsing its command line.
type conf map[string]string

func (c conf) get(key, def string) string {
	if v, ok := c[key]; ok {
		return v
	}
	return def
}

// prefixed returns the entries under prefix with the prefix cut off, as Spark's
// parsePrefixedKeyValuePairs does.
func (c conf) prefixed(prefix string) map[string]string {
	var out map[string]string
	for k, v := range c {
		if len(k) > len(prefix) && strings.HasPrefix(k, prefix) {
			if out == nil {
				out = make(map[string]string)
			}
			out[k[len(prefix):]] = v
		}
	}
	return out
}

// submitConf is the Spark configuration that spark-submit holds after parsing the command line
// the spark-submit submitter gives it: the --conf properties (last wins), then the properties
// spark-submit derives from its own flags, which win over --conf.
func submitConf(app *v1beta2.SparkApplication, attempt submission.Attempt, master string) (conf, error) {
	sub, err := sparkconf.Build(app, sparkconf.Options{SubmissionID: attempt.SubmissionID, DriverPodName: attempt.DriverPodName,
		Decided: attempt.Scheduling.SparkDecisions()})
	if err != nil {
		return nil, userError("%v", err)
	}
	c := conf(sub.Map())
	c[keyMaster] = master
	c[keyDeployMode] = string(v1beta2.DeployModeCluster)
	c[keyAppName] = sub.Name
	for _, f := range []struct {
		key   string
		items []string
	}{
		{keyJars, sub.Jars},
		{keyFiles, sub.Files},
		{keyPyFiles, sub.PyFiles},
		{keyPackages, sub.Packages},
		{keyExcludes, sub.ExcludePackages},
		{keyRepositories, sub.Repositories},
		{keyArchives, sub.Archives},
	} {
		if len(f.items) > 0 {
			c[f.key] = strings.Join(f.items, ",")
		}
	}
	return c, nil
}

// javaDate formats t as java.util.Date#toString does, for the comment that
// java.util.Properties#store writes.
func javaDate(t time.Time) string {
	return t.Format("Mon Jan 02 15:04:05 MST 2006")
}

// propertiesFile renders props in java.util.Properties#store format, which the driver reads
// back with Properties#load: keys in sorted order so equal confs give equal files.
func propertiesFile(comment string, when time.Time, props map[string]string) string {
	var b strings.Builder
	b.Grow(64 * (len(props) + 2))
	b.WriteString("#")
	b.WriteString(comment)
	b.WriteString("\n#")
	b.WriteString(javaDate(when))
	b.WriteString("\n")
	for _, k := range slices.Sorted(maps.Keys(props)) {
		escapeProperty(&b, k, true)
		b.WriteByte('=')
		escapeProperty(&b, props[k], false)
		b.WriteByte('\n')
	}
	return b.String()
}

func escapeProperty(b *strings.Builder, s string, isKey bool) {
	for i, r := range s {
		switch r {
		case ' ':
			if i == 0 || isKey {
				b.WriteByte('\\')
			}
			b.WriteByte(' ')
		case '\\':
			b.WriteString(`\\`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\f':
			b.WriteString(`\f`)
		case '=', ':', '#', '!':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04X`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
}

// ParseProperties reads a file in java.util.Properties format (as written by spark-submit or
// by this package) into a map; tests use it to compare ConfigMaps by content.
func ParseProperties(s string) (map[string]string, error) {
	out := make(map[string]string)
	lines := strings.Split(s, "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimLeft(lines[i], " \t\f")
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		// A line ending in an odd number of backslashes continues on the next one.
		for strings.HasSuffix(line, `\`) && (len(line)-len(strings.TrimRight(line, `\`)))%2 == 1 && i+1 < len(lines) {
			i++
			line = line[:len(line)-1] + strings.TrimLeft(lines[i], " \t\f")
		}
		key, rest := splitKey(line)
		k, err := unescapeProperty(key)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		v, err := unescapeProperty(rest)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		out[k] = v
	}
	return out, nil
}

func splitKey(line string) (string, string) {
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++
		case '=', ':', ' ', '\t', '\f':
			key := line[:i]
			rest := strings.TrimLeft(line[i:], " \t\f")
			if rest != "" && (rest[0] == '=' || rest[0] == ':') && (line[i] == ' ' || line[i] == '\t' || line[i] == '\f') {
				rest = rest[1:]
			} else if line[i] == '=' || line[i] == ':' {
				rest = line[i+1:]
			}
			return key, strings.TrimLeft(rest, " \t\f")
		}
	}
	return line, ""
}

func unescapeProperty(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+5 > len(s) {
				return "", fmt.Errorf("truncated \\u escape in %q", s)
			}
			n, err := strconv.ParseUint(s[i+1:i+5], 16, 16)
			if err != nil {
				return "", fmt.Errorf("bad \\u escape in %q", s)
			}
			b.WriteRune(rune(n))
			i += 4
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}
