{{/* The metrics flags of the operator's containers (controller and webhook). */}}
{{- define "spark-operator.metricsArgs" -}}
{{- $m := .Values.prometheus.metrics -}}
{{- if $m.enable -}}
- --metrics-bind-address=:{{ $m.port }}
- --metrics-endpoint={{ $m.endpoint }}
{{- with $m.prefix }}
- --metrics-prefix={{ . }}
{{- end }}
- --metrics-labels={{ default "app_type" $m.labels }}
{{- with $m.jobSubmitLatencyBuckets }}
- --metrics-job-submit-latency-buckets={{ . }}
{{- end }}
{{- with $m.jobStartLatencyBuckets }}
- --metrics-job-start-latency-buckets={{ . }}
{{- end }}
{{- else -}}
- --metrics-bind-address=0
{{- end }}
{{- end }}

{{/* The metrics port of the operator's containers. */}}
{{- define "spark-operator.metricsPort" -}}
{{- if .Values.prometheus.metrics.enable -}}
- name: {{ .Values.prometheus.metrics.portName }}
  containerPort: {{ .Values.prometheus.metrics.port }}
{{- end }}
{{- end }}

{{/* The pod annotations: the prometheus.io ones while metrics are on, then the given ones (.annotations). */}}
{{- define "spark-operator.podAnnotations" -}}
{{- $m := .ctx.Values.prometheus.metrics -}}
{{- $a := dict -}}
{{- if $m.enable -}}
{{- $_ := set $a "prometheus.io/scrape" "true" -}}
{{- $_ := set $a "prometheus.io/port" (toString $m.port) -}}
{{- $_ := set $a "prometheus.io/path" $m.endpoint -}}
{{- end -}}
{{- with .annotations }}{{ $a = merge (deepCopy .) $a }}{{ end -}}
{{- with $a }}{{ toYaml . }}{{ end -}}
{{- end }}

{{/* The operator's metric names with the prefix: text with every spark_application_ and spark_executor_ prefixed. */}}
{{- define "spark-operator.prefixMetrics" -}}
{{- $p := .ctx.Values.prometheus.metrics.prefix -}}
{{- .text | replace "spark_application_" (print $p "spark_application_") | replace "spark_executor_" (print $p "spark_executor_") -}}
{{- end }}
