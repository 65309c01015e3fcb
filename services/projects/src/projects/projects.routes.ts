import { Router } from 'express';
import { accountIdOf, listQuery, listResponse, validate } from '@platform/shared';
import type { ProjectsService } from './projects.service';
import {
  createProjectBody,
  toProjectListItem,
  toProjectResponse,
  updateProjectBody,
} from './projects.schemas';

export function projectsRouter(projects: ProjectsService): Router {
  const router = Router();

  router.get('/api/projects', async (req, res) => {
    const page = await projects.listProjects(accountIdOf(req), validate(listQuery, req.query));
    res.json(listResponse('projects', page, toProjectListItem));
  });

  router.post('/api/projects', async (req, res) => {
    const body = validate(createProjectBody, req.body ?? {});
    const project = await projects.createProject(accountIdOf(req), body);
    res.status(201).json(toProjectResponse(project));
  });

  router.get('/api/projects/:projectId', async (req, res) => {
    const project = await projects.getProject(accountIdOf(req), req.params.projectId);
    res.json(toProjectResponse(project));
  });

  router.patch('/api/projects/:projectId', async (req, res) => {
    const body = validate(updateProjectBody, req.body ?? {});
    const project = await projects.updateProject(accountIdOf(req), req.params.projectId, body);
    res.json(toProjectResponse(project));
  });

  router.delete('/api/projects/:projectId', async (req, res) => {
    await projects.deleteProject(accountIdOf(req), req.params.projectId);
    res.status(204).end();
  });

  return router;
}
