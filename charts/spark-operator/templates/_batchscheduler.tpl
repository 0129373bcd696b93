{{/* The batch scheduler flags, the same for the controller and the webhook (which refuses
applications naming a scheduler that is not enabled, and unknown gang queues). */}}
{{- define "spark-operator.batchSchedulerArgs" -}}
{{- $b := .Values.controller.batchScheduler -}}
{{- with $b.default }}
- --default-batch-scheduler={{ . }}
{{- end }}
{{- if $b.enable }}
- --enable-batch-scheduler
{{- with $b.kubeSchedulerNames }}
- --kube-scheduler-names={{ join "," . }}
{{- end }}
- --coscheduling-schedule-timeout={{ $b.coschedulingScheduleTimeout }}
{{- end }}
{{- if $b.kubernetes.enable }}
- --enable-kubernetes-scheduler
{{- end }}
{{- if or $b.gang.enable $b.kubernetes.enable $b.enable }}
{{- if $b.gang.enable }}
- --enable-gang-scheduler
{{- end }}
- --gang-backfill={{ $b.gang.backfill }}
- --gang-preemption={{ $b.gang.preemption }}
- --gang-preemption-wait={{ $b.gang.preemptionWait }}
- --gang-reservation-timeout={{ $b.gang.reservationTimeout }}
{{- if not (kindIs "invalid" $b.gang.startBacklog) }}
- --gang-start-backlog={{ $b.gang.startBacklog }}
{{- end }}
- --gang-enforcement={{ $b.gang.enforcement }}
{{- with $b.gang.placeholderImage }}
- --gang-placeholder-image={{ . }}
{{- end }}
{{- end }}
{{- with $b.external.url }}
{{- if not $b.gang.enable }}
{{- fail "controller.batchScheduler.external.url needs controller.batchScheduler.gang.enable: the external scheduler's applications wait in the gang scheduler's queues" }}
{{- end }}
- --external-scheduler-url={{ . }}
- --external-scheduler-timeout={{ $b.external.timeout }}
- --external-scheduler-interval={{ $b.external.interval }}
{{- end }}
{{- end }}
